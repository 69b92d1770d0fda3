"""The answer scorecard question by question: each graded set's right / refused / wrong, and what changed against
the accepted scorecard.

A question the accepted scorecard answered right must still be answered right, by the same kind, unless the change
says why: an entry in answer_changes.json (the question as written and the reason) travels with the change that
moves it, and is reviewed with it. A question that is still right but worded differently is reported, not gated.

Graded question by question: the generated kind questions (their typed answer against the truth), the answerability
sets (literature, plan: right, or refused where nothing can be backed) and the relational questions (an expected id
named in the claims). The retrieval lookups and PubMedQA rows grade evidence, not the answer, and are left out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from dagster_project.evals.store import EvalRun, question_rows

EXPLAINED_FILE = Path(__file__).with_name("answer_changes.json")
OUTCOMES = ("right", "refused", "wrong")


@dataclass(frozen=True)
class Graded:
    """One question's grade: its set, the kind that answered it, and how it came out."""

    set: str
    kind: str
    outcome: str  # one of OUTCOMES
    answer: str


@dataclass(frozen=True)
class Change:
    """A question the baseline answered right that now comes out otherwise, or is answered by another kind."""

    set: str
    question: str
    before: Graded
    now: Graded
    why: str | None  # the reason the change gives, or None

    @property
    def explained(self) -> bool:
        return self.why is not None


def graded(row: Mapping[str, Any]) -> Graded | None:
    """The grade of one stored answer-scorecard row, or None for a row not graded question by question."""
    variant = row.get("variant")
    answer, kind = str(row.get("answer", "")), str(row.get("answer_kind", ""))
    if variant == "kinds":
        # A typed answer is right or wrong; "not found" where the question names something the index holds is a
        # refusal (the generated "absent" questions expect it, and then it is right).
        refused = kind == "not_found" and not row["kind_pass"]
        return Graded("generated", kind, _outcome(bool(row["kind_pass"]), refused), answer)
    if variant == "answerability":
        refused = not row["answered"]
        return Graded(f"answerability_{row['set']}", kind, _outcome(bool(row["right"]), refused), answer)
    if "relational_pass" in row:
        refused = float(row.get("confidence", 0.0)) == 0.0
        return Graded("relational", kind, _outcome(bool(row["relational_pass"]), refused), answer)
    return None


def _outcome(right: bool, refused: bool) -> str:
    return "right" if right else "refused" if refused else "wrong"


def set_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """`set_<set>_<outcome>` counts for every graded set (reported on each platform the scorecard runs on)."""
    counts = Counter((g.set, g.outcome) for row in rows if (g := graded(row)) is not None)
    sets = sorted({s for s, _ in counts})
    return {f"set_{s}_{outcome}": float(counts[(s, outcome)]) for s in sets for outcome in OUTCOMES}


def _key(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("variant", "")), str(row.get("question", ""))


@dataclass(frozen=True)
class Comparison:
    changed: list[Change]  # gated: each must be explained
    reworded: int  # still right, same kind, other words
    no_longer_asked: int  # right before, not in this run's sets (the data the questions are drawn from changed)

    @property
    def unexplained(self) -> list[Change]:
        return [c for c in self.changed if not c.explained]


def compare(
    baseline: Iterable[Mapping[str, Any]], current: Iterable[Mapping[str, Any]], explained: Mapping[str, str]
) -> Comparison:
    """The baseline's right questions that this run answers otherwise or by another kind, each with the reason the
    change gives, if any. Questions are matched by variant and text: a generated question's id is its position,
    its text is what is asked."""
    now = {_key(r): g for r in current if (g := graded(r)) is not None}
    changed, reworded, dropped = [], 0, 0
    for row in baseline:
        before = graded(row)
        if before is None or before.outcome != "right":
            continue
        after = now.get(_key(row))
        if after is None:
            dropped += 1
        elif after.outcome == "right" and after.kind == before.kind:
            reworded += after.answer != before.answer
        else:
            question = str(row.get("question", ""))
            changed.append(Change(before.set, question, before, after, explained.get(question)))
    return Comparison(changed, reworded, dropped)


def against_baseline(engine: Engine, baseline: EvalRun | None, current: EvalRun) -> Comparison | None:
    """The stored answer scorecard `current` against the accepted `baseline`, question by question, with the
    reasons the change gives; None without a baseline or when the data changed since it (a refresh may change what
    is right, and the gated metrics judge it)."""
    if baseline is None or baseline.dataset_version != current.dataset_version:
        return None
    return compare(question_rows(engine, baseline.id), question_rows(engine, current.id), load_explained())


def load_explained(path: Path = EXPLAINED_FILE) -> dict[str, str]:
    """question → why, from the reviewed file of intended changes (a list of {"question", "why"})."""
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text())
    if not isinstance(entries, list):
        raise ValueError(f"{path}: a list of {{question, why}} entries is expected")
    bad = [n for n, e in enumerate(entries) if not (isinstance(e, dict) and e.get("question") and e.get("why"))]
    if bad:
        raise ValueError(f"{path}: each entry needs a question and why (entries {bad})")
    return {str(e["question"]): str(e["why"]) for e in entries}


def markdown(comparison: Comparison, limit: int = 25) -> str:
    """The changes as a table, unexplained first, and what was only reported."""
    found = comparison.changed
    tail = (
        f"\n\nStill right with the same kind but other words: {comparison.reworded}; right before and no longer "
        f"asked: {comparison.no_longer_asked}."
    )
    if not found:
        return "No question the accepted scorecard answered right changed." + tail
    lines = ["| set | question | before | now | why |", "|---|---|---|---|---|"]
    for change in sorted(found, key=lambda c: (c.explained, c.set, c.question))[:limit]:
        now = f"{change.now.outcome} ({change.now.kind})"
        why = change.why or "**unexplained**"
        lines.append(f"| {change.set} | {_cell(change.question)} | right ({change.before.kind}) | {now} | {why} |")
    if len(found) > limit:
        lines.append(f"| … | {len(found) - limit} more | | | |")
    return "\n".join(lines) + tail


def _cell(text: str) -> str:
    return text.replace("|", "\\|")[:120]
