"""Pathway names and ids in questions, from the `pathways` table (Postgres, so it works with Neo4j down).

A question names a pathway by id (R-HSA-70171, hsa00010) or by name ("Reactome's glycolysis", "the KEGG pathway
'Other glycan degradation'"). Names are matched as whole phrases, case and punctuation folded, longest first, so
"Glycolysis / Gluconeogenesis" wins over "Glycolysis" inside it. A database word next to a name ("KEGG
glycolysis") restricts the match to that database; when that database has no pathway of exactly that name the
closest one by name tokens is taken (KEGG's is "Glycolysis / Gluconeogenesis").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.index_state import PerIndex
from retrieval.terms import STOPWORDS

_ID = re.compile(r"(?<![\w-])(R-HSA-\d+|hsa\d{5})(?![\w-])")
_SOURCE_WORD = {"reactome": "reactome", "kegg": "kegg"}
# Words that say "pathway" without naming one: never part of a fuzzy match.
_GENERIC = STOPWORDS | {"pathway", "pathways", "kegg", "reactome", "genes", "gene", "members", "member", "shared",
                        "share", "common", "compare", "versus", "vs", "between", "which", "human", "homo", "sapiens",
                        "counterpart", "equivalent", "sub", "subpathways", "proteins", "signaling", "signalling"}


@dataclass(frozen=True)
class PathwayRef:
    id: str
    source: str
    name: str


def fold(value: str) -> str:
    """Lower case, punctuation to spaces: 'Glycolysis / Gluconeogenesis' → 'glycolysis gluconeogenesis'."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", value.lower()).split())


def _tokens(value: str) -> set[str]:
    return {t for t in fold(value).split() if t not in _GENERIC and len(t) > 1}


class PathwayLexicon:
    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        self.by_id = {pid: PathwayRef(pid, source, name) for pid, source, name in rows}
        self._by_name: dict[str, list[PathwayRef]] = {}
        for ref in self.by_id.values():
            self._by_name.setdefault(fold(ref.name), []).append(ref)
        self._max_words = max((len(name.split()) for name in self._by_name), default=0)
        self._tokens = {pid: _tokens(ref.name) for pid, ref in self.by_id.items()}

    def __len__(self) -> int:
        return len(self.by_id)

    def _name_spans(self, words: list[str]) -> list[tuple[int, int, str]]:
        """Every word span that is a pathway name, longest first (a dictionary lookup per span, not a regex per
        name: ~100 lookups for a question instead of ~3,000 patterns)."""
        spans = [(i, j, name) for i in range(len(words))
                 for j in range(i + 1, min(len(words), i + self._max_words) + 1)
                 if len(name := " ".join(words[i:j])) >= 4 and name in self._by_name]
        return sorted(spans, key=lambda span: (-len(span[2]), span[0]))

    def find(self, question: str) -> list[PathwayRef]:
        """Pathways the question names, in order of appearance, each once."""
        found: list[tuple[int, PathwayRef]] = [(m.start(), self.by_id[m.group(1)]) for m in _ID.finditer(question)
                                              if m.group(1) in self.by_id]
        words = fold(question).split()
        both_named = "kegg" in words and "reactome" in words
        taken: list[tuple[int, int]] = []
        for start, end, name in self._name_spans(words):
            if any(s < end and start < e for s, e in taken):
                continue  # inside a longer name already taken
            taken.append((start, end))
            refs = self._by_name[name]
            position = 10_000 + start  # ids first, then names in question order
            if both_named and len({r.source for r in refs}) > 1:
                found += [(position, r) for r in refs]  # "the KEGG and Reactome apoptosis pathways"
            else:
                found.append((position, self._pick(refs, " ".join(words[:start]), " ".join(words[end:]))))
        return _unique(ref for _, ref in sorted(found, key=lambda item: item[0]))

    def fuzzy(self, question: str, source: str = "", minimum: float = 0.6) -> PathwayRef | None:
        """The pathway whose name's words the question holds best (≥ `minimum` of them), when no name matched
        exactly: 'the Reactome citric acid cycle pathway' → 'Citric acid cycle (TCA cycle)'."""
        have = _tokens(question)
        best: tuple[float, int, str] | None = None
        for pid, name in self._tokens.items():
            if not name or (source and self.by_id[pid].source != source):
                continue
            candidate = (len(name & have) / len(name), len(name), pid)
            best = candidate if best is None or candidate[:2] > best[:2] else best
        return self.by_id[best[2]] if best and best[0] >= minimum else None

    def _pick(self, refs: list[PathwayRef], before: str, after: str) -> PathwayRef:
        """Among same-named pathways, the one of the database named right before (or after) the name."""
        wanted = _nearby_source(before, after)
        preferred = [r for r in refs if r.source == wanted]
        if preferred:
            return preferred[0]
        if wanted:
            closest = self.closest(" ".join(fold(refs[0].name).split()), wanted)
            if closest is not None:
                return closest
        return refs[0]

    def closest(self, phrase: str, source: str) -> PathwayRef | None:
        """The pathway of `source` whose name tokens best cover the phrase's (all of them, fewest extra)."""
        wanted = _tokens(phrase)
        if not wanted:
            return None
        best: tuple[float, str] | None = None
        for pid, have in self._tokens.items():
            if self.by_id[pid].source == source and wanted <= have:
                score = len(wanted) / len(have)
                if best is None or score > best[0]:
                    best = (score, pid)
        return self.by_id[best[1]] if best else None

    def suggest(self, phrase: str, limit: int = 3) -> list[PathwayRef]:
        """Closest names by shared tokens, for 'not found' messages."""
        wanted = _tokens(phrase)
        scored = [(len(wanted & have) / max(len(wanted | have), 1), self.by_id[pid].name, self.by_id[pid])
                  for pid, have in self._tokens.items()]
        return [r for score, _, r in sorted(scored, key=lambda s: (-s[0], s[1]))[:limit] if score > 0]


def _unique(refs: Iterable[PathwayRef]) -> list[PathwayRef]:
    out: dict[str, PathwayRef] = {}
    for ref in refs:
        out.setdefault(ref.id, ref)
    return list(out.values())


def _nearby_source(before: str, after: str) -> str:
    """'kegg' / 'reactome' when that word is among the three words before the name or right after it."""
    words_before = before.split()[-3:]
    words_after = after.split()[:2]
    for word in [*reversed(words_before), *words_after]:
        if word in _SOURCE_WORD:
            return _SOURCE_WORD[word]
    return ""


def _read_pathways(engine: Engine) -> PathwayLexicon:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT pathway_id, source, name FROM pathways WHERE status = 'active'"
                                 " ORDER BY pathway_id")).all()
    return PathwayLexicon([(r.pathway_id, r.source, r.name) for r in rows])


_lexicons = PerIndex(_read_pathways)


def load_pathways(engine: Engine, version: str) -> PathwayLexicon:
    """One lexicon per (database, index version) per process."""
    return _lexicons.get(engine, version)
