"""The literature-tools scorecard: the translation check and the checked search on the failure-mode set
(pubmed_translations.json), and the strategy memory on its rephrasings and near misses.

- check precision / recall: over (item, failure) pairs, the check's findings against each item's labelled failures;
- search: each question Flux sends is searched through `CheckedSearch` against the recorded exchanges (ESearch
  answered from the set: the recorded translation and count for a recorded term, nothing for any other), and is
  right when it ends on the set's last exchange with a passing translation — the count a person checked;
- requests per question and the refinement rate, without and with strategy memory; the memory's hit rate on the
  rephrasings and its false reuses on the near misses (which must stay 0).

The set was written with the check (its dev half); the figures are dev figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from retrieval.model.literature import LiteratureRequest, TranslationProblem
from retrieval.pubmed.search import CheckedSearch
from retrieval.pubmed.strategies import Strategy, choose, tokens
from retrieval.question.literature_questions import read_request

TRANSLATIONS = Path(__file__).with_name("pubmed_translations.json")
Check = Callable[[LiteratureRequest, str, int | None], list[TranslationProblem]]


def load() -> dict[str, Any]:
    return json.loads(TRANSLATIONS.read_text())


def check_scores(items: Iterable[dict[str, Any]], check: Check) -> dict[str, Any]:
    """Precision and recall of a check over (item, failure) pairs, with per-failure counts."""
    tp = fp = fn = exact = total = 0
    per_code: dict[str, list[int]] = {}
    for item in items:
        request = read_request(item["question"])
        if request is None:
            continue
        first = item["exchanges"][0]
        found = {p.code for p in check(request, first["translation"], first["count"])}
        wanted = set(item["failures"])
        tp, fp, fn = tp + len(found & wanted), fp + len(found - wanted), fn + len(wanted - found)
        exact, total = exact + (found == wanted), total + 1
        for code in found | wanted:
            counts = per_code.setdefault(code, [0, 0, 0])
            counts[0 if code in found & wanted else 1 if code in found else 2] += 1
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "exact": exact / total if total else 0.0,
        "items": total,
        "per_failure": {
            code: dict(zip(("found", "false", "missed"), c, strict=True)) for code, c in sorted(per_code.items())
        },
    }


class RecordedEUtils:
    """ESearch as the failure-mode set records it (the part of EUtilsClient a checked search calls), counting
    requests: a recorded term gets its translation and count, any other term nothing."""

    def __init__(self, items: Iterable[dict[str, Any]]) -> None:
        self.exchanges = {x["term"]: x for item in items for x in item["exchanges"]}
        self.requests = 0

    def esearch(self, db: str, term: str, **_: Any) -> dict[str, Any]:
        self.requests += 1
        found = self.exchanges.get(term)
        if found is None:
            return {"count": 0, "ids": [], "query_translation": f'"{term}"[All Fields]', "tool": "esearch"}
        return {"count": found["count"], "ids": [], "query_translation": found["translation"], "tool": "esearch"}

    def unknown_tags(self, db: str, term: str) -> list[str]:
        return []


class ListMemory:
    """Strategy memory kept in a list, with StrategyMemory's selection (`choose`): what the scorecard measures
    without a database (the Postgres store is tested against Postgres)."""

    def __init__(self) -> None:
        self.stored: list[tuple[list[str], Strategy]] = []

    def lookup(self, question: str) -> Strategy | None:
        return choose(question, self.stored)

    def remember(self, question: str, trail: Any) -> None:
        final = trail.final
        self.stored.append(
            (tokens(question)[0], Strategy(final.term, final.translation, len(trail.attempts), question))
        )


def search_scores(data: dict[str, Any]) -> dict[str, Any]:
    """Right final counts, requests and refinements over the questions Flux sends, then the memory probes."""
    items = [i for i in data["items"] if i["sent_by"] == "flux"]
    client = RecordedEUtils(items)
    search = CheckedSearch(client)  # type: ignore[arg-type]
    right = refined = requests = 0
    by_id = {}
    memory = ListMemory()
    for item in items:
        request = read_request(item["question"])
        assert request is not None, item["question"]
        trail = search.search(item["question"], request, memory=memory)  # type: ignore[arg-type]
        last = item["exchanges"][-1]
        right += bool(trail.passed and trail.final and trail.final.count == last["count"])
        refined += trail.refinements > 0
        requests += trail.requests
        by_id[item["id"]] = trail.requests
    probes = data["memory_probes"]["probes"]
    hits = false_reuse = with_memory = without_memory = 0
    rephrasings = [p for p in probes if p["same_as"]]
    for probe in probes:
        request = read_request(probe["question"])
        assert request is not None, probe["question"]
        reused = memory.lookup(probe["question"])
        if probe["same_as"] is None:
            false_reuse += reused is not None
            continue
        hits += reused is not None
        trail = search.search(probe["question"], request, memory=memory)  # type: ignore[arg-type]
        with_memory += trail.requests
        # Without memory a rephrasing repeats its original's refinement loop (the set records that loop's answers).
        without_memory += by_id[probe["same_as"]]
    n = len(items)
    return {
        "questions": n,
        "right": right / n,
        "refinement_rate": refined / n,
        "requests_per_question": requests / n,
        "memory_hit_rate": hits / len(rephrasings),
        "memory_false_reuse": false_reuse,
        "requests_per_rephrasing": {
            "without_memory": without_memory / len(rephrasings),
            "with_memory": with_memory / len(rephrasings),
        },
    }


def scorecard() -> tuple[dict[str, float], list[dict[str, Any]], dict[str, dict[str, int]]]:
    """(metrics, one row per item with what the check found, per-failure counts) for the scorecard asset."""
    from retrieval.pubmed.translation import check

    data = load()
    checked = check_scores(data["items"], check)
    searched = search_scores(data)
    metrics = {
        "questions": float(checked["items"]),
        "check_precision": checked["precision"],
        "check_recall": checked["recall"],
        "check_exact": checked["exact"],
        "search_right": searched["right"],
        "refinement_rate": searched["refinement_rate"],
        "requests_per_question": searched["requests_per_question"],
        "memory_hit_rate": searched["memory_hit_rate"],
        "memory_false_reuse": float(searched["memory_false_reuse"]),
        "requests_per_rephrasing_without_memory": searched["requests_per_rephrasing"]["without_memory"],
        "requests_per_rephrasing_with_memory": searched["requests_per_rephrasing"]["with_memory"],
    }
    rows = []
    for item in data["items"]:
        request = read_request(item["question"])
        if request is None:
            continue
        first = item["exchanges"][0]
        found = sorted({p.code for p in check(request, first["translation"], first["count"])})
        rows.append(
            {
                "question_id": item["id"],
                "question": item["question"],
                "sent_by": item["sent_by"],
                "labelled": ",".join(item["failures"]),
                "found": ",".join(found),
                "right": found == sorted(item["failures"]),
            }
        )
    return metrics, rows, checked["per_failure"]
