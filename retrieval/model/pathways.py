"""Pathway names and ids in questions, from the `pathways` table (Postgres, so it works with Neo4j down).

A question names a pathway by id (R-HSA-70171, hsa00010) or by name ("Reactome's glycolysis", "the KEGG pathway
'Other glycan degradation'"). Names are matched as whole phrases, case and punctuation folded, longest first, so
"Glycolysis / Gluconeogenesis" wins over "Glycolysis" inside it. A database word next to a name ("KEGG
glycolysis") restricts the match to that database; when that database has no pathway of exactly that name the
closest one by name tokens is taken (KEGG's is "Glycolysis / Gluconeogenesis").

Words are compared in canonical form (spelling.py: "signalling" = "signaling", plurals singular), after typo
correction against the names' own words. A name found inside a longer phrase of other content words ("plant
hormone signal transduction") is not taken as that phrase: the question named something the index may not hold,
and a name match must cover the words asked as well as the name's (`fuzzy`), so nothing is answered about a
pathway that merely shares some words with the one asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.model.diseases import DiseaseLexicon, read_diseases
from retrieval.model.index_state import PerIndex
from retrieval.model.reactions import ReactionLexicon, read_reactions
from retrieval.model.spelling import TypoCorrector, canonical, canonical_words, fold
from retrieval.model.terms import QUESTION_STOPWORDS

_ID = re.compile(r"(?<![\w-])(R-HSA-\d+|hsa\d{5})(?![\w-])", re.I)
_SOURCE_WORD = {"reactome": "reactome", "kegg": "kegg"}
# Words that say "pathway" without naming one: never part of a fuzzy match.
_GENERIC = frozenset(
    canonical(w)
    for w in QUESTION_STOPWORDS
    | {
        "pathway",
        "pathways",
        "kegg",
        "reactome",
        "genes",
        "gene",
        "members",
        "member",
        "shared",
        "share",
        "common",
        "compare",
        "versus",
        "vs",
        "between",
        "which",
        "human",
        "humans",
        "homo",
        "sapiens",
        "counterpart",
        "equivalent",
        "sub",
        "subpathways",
        "proteins",
        "protein",
        "signaling",
        "signalling",
        "many",
        "number",
        "count",
        "belong",
        "belongs",
        "part",
        "parent",
        "parents",
        "children",
        "child",
        "under",
        "contain",
        "contains",
        "included",
        "include",
        "includes",
        "overview",
        "summary",
        "participate",
        "participates",
        "database",
        "map",
        "maps",
        "id",
        "ids",
        "both",
        "compounds",
        "compound",
        "metabolites",
        "metabolite",
        "use",
        "uses",
        "used",
        "tell",
        "about",
        "listed",
        "found",
        "missing",
        "except",
        "excluding",
        "only",
        "absent",
        "present",
        "set",
        "sets",
        "list",
        "whole",
        "entire",
        "enumerate",
        "find",
        "get",
        "display",
        "identify",
        "know",
        "want",
        "need",
        "like",
        "return",
        "retrieve",
        "fetch",
        "look",
        "see",
        "print",
        "output",
        "lookup",
        "names",
        "described",
        "annotated",
        "assigned",
        "linked",
        "associated",
        "participating",
        "mapped",
        "take",
        "takes",
        "anything",
        "everything",
        "total",
        "altogether",
        "connect",
        "connects",
        "connected",
        "connection",
        "connections",
        "link",
        "links",
        "relate",
        "related",
        "relates",
        "relation",
        "relationship",
        "tie",
        "ties",
        "bridge",
        "bridges",
        "true",
        "false",
        "confirm",
        "correct",
        # Verbs that place a pathway ("Does Reactome file Glycolysis under Disease?"), never part of its name.
        "file",
        "files",
        "filed",
        "place",
        "places",
        "placed",
        "classify",
        "classifies",
        "categorize",
        "categorizes",
        "categorise",
        "categorises",
    }
)
READ_CACHE = 64  # questions whose reading is kept (thread-safe: serving shares a lexicon between requests)
# A content word right before a name, at least this long, makes it a different, longer name.
MIN_MODIFIER_LENGTH = 4


@dataclass(frozen=True)
class PathwayRef:
    id: str
    source: str
    name: str


def _tokens(value: str) -> set[str]:
    return {t for t in canonical_words(value) if t not in _GENERIC and len(t) > 1}


class PathwayLexicon:
    def __init__(
        self,
        rows: list[tuple[str, str, str]],
        reactions: ReactionLexicon | None = None,
        diseases: DiseaseLexicon | None = None,
    ) -> None:
        # The reactions and conditions the served tables hold, read with the pathways (a question names any).
        self.reactions = reactions or ReactionLexicon()
        self.diseases = diseases or DiseaseLexicon()
        self.by_id = {pid: PathwayRef(pid, source, name) for pid, source, name in rows}
        self._by_name: dict[str, list[PathwayRef]] = {}
        for ref in self.by_id.values():
            for name in _name_forms(ref.name):
                self._by_name.setdefault(" ".join(canonical_words(name)), []).append(ref)
        self._max_words = max((len(name.split()) for name in self._by_name), default=0)
        self._tokens = {pid: _tokens(ref.name) for pid, ref in self.by_id.items()}
        self._name_words = {w for name in self._by_name for w in name.split()}
        self._typos = TypoCorrector(self._name_words, keep=_GENERIC)
        # One question is read several times while it is classified (kind rules, names, each side of a pair).
        self._read = lru_cache(maxsize=READ_CACHE)(self._read_once)

    def read(self, question: str) -> tuple[list[str], dict[str, str]]:
        """The question's canonical words with typos corrected to name words, and the corrections made."""
        words, corrections = self._read(question)
        return list(words), dict(corrections)

    def _read_once(self, question: str) -> tuple[tuple[str, ...], dict[str, str]]:
        corrections = self._typos.corrections(question)
        return tuple(canonical(corrections.get(w, w)) for w in fold(question).split()), corrections

    def __len__(self) -> int:
        return len(self.by_id)

    def _name_spans(self, words: list[str]) -> list[tuple[int, int, str]]:
        """Every word span that is a pathway name, longest first (a dictionary lookup per span, not a regex per
        name: ~100 lookups for a question instead of ~3,000 patterns)."""
        spans = [
            (i, j, name)
            for i in range(len(words))
            for j in range(i + 1, min(len(words), i + self._max_words) + 1)
            if len(name := " ".join(words[i:j])) >= 4 and name in self._by_name
        ]
        return sorted(spans, key=lambda span: (-len(span[2]), span[0]))

    def find(self, question: str) -> list[PathwayRef]:
        """Pathways the question names, in order of appearance, each once."""
        found: list[tuple[int, PathwayRef]] = [
            (m.start(), self.by_id[_id(m.group(1))]) for m in _ID.finditer(question) if _id(m.group(1)) in self.by_id
        ]
        words, _ = self.read(_ID.sub(" ", question))
        both_named = "kegg" in words and "reactome" in words
        taken: list[tuple[int, int]] = []
        for start, end, name in self._name_spans(words):
            if any(s < end and start < e for s, e in taken):
                continue  # inside a longer name already taken
            if _modified(words, start, self._by_name[name]):
                continue  # "plant hormone signal transduction" is not "Signal Transduction"
            taken.append((start, end))
            refs = self._by_name[name]
            position = 10_000 + start  # ids first, then names in question order
            nearby = _nearby_source(" ".join(words[:start]), " ".join(words[end:]))
            if both_named and len({r.source for r in refs}) > 1 and not _adjacent_source(words, start, end):
                found += [(position, r) for r in refs]  # "the KEGG and Reactome apoptosis pathways"
            elif nearby and any(r.source == nearby for r in refs):
                found.append((position, next(r for r in refs if r.source == nearby)))
            else:
                found.append((position, self._pick(refs, " ".join(words[:start]), " ".join(words[end:]))))
        return _unique(ref for _, ref in sorted(found, key=lambda item: item[0]))

    def fuzzy(
        self, question: str, source: str = "", minimum: float = 0.6, ignore: frozenset[str] = frozenset()
    ) -> PathwayRef | None:
        """The pathway whose name's words the question holds best (≥ `minimum` of them), when no name matched
        exactly: 'the Reactome citric acid cycle pathway' → 'Citric acid cycle (TCA cycle)'. The name must also
        cover ≥ `minimum` of the question's own content words (`ignore`: words already accounted for, such as gene
        symbols), so 'plant hormone signal transduction' does not become 'Signal Transduction'."""
        words, _ = self.read(_ID.sub(" ", question))
        have = {w for w in words if w not in _GENERIC and len(w) > 1}
        # Gene names and symbol-like words (TP53, 2) the name lacks are not part of the name asked.
        plain = {w for w in have if w not in ignore and not any(ch.isdigit() for ch in w)}
        symbols = have - plain
        best: tuple[float, int, str] | None = None
        for pid, name in self._tokens.items():
            if not name or (source and self.by_id[pid].source != source):
                continue
            shared = len(name & have)
            if not shared and minimum > 0:
                continue  # shares no word: below any minimum
            asked = len(plain) + len(symbols & name)
            candidate = (shared / len(name), len(name), pid)
            if shared / max(asked, 1) >= minimum and (best is None or candidate[:2] > best[:2]):
                best = candidate
        return self.by_id[best[2]] if best and best[0] >= minimum else None

    def _pick(self, refs: list[PathwayRef], before: str, after: str) -> PathwayRef:
        """Among same-named pathways, the one of the database named right before (or after) the name."""
        wanted = _nearby_source(before, after)
        preferred = [r for r in refs if r.source == wanted]
        if preferred:
            return preferred[0]
        if wanted:
            closest = self.closest(refs[0].name, wanted)
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

    def suggest(self, phrase: str, limit: int = 3, source: str = "") -> list[PathwayRef]:
        """Closest names by shared tokens (typos corrected), for 'not found' messages."""
        words, _ = self.read(phrase)
        wanted = {w for w in words if w not in _GENERIC and len(w) > 1}
        scored = [
            (len(wanted & have) / max(len(wanted | have), 1), self.by_id[pid].name, self.by_id[pid])
            for pid, have in self._tokens.items()
            if not source or self.by_id[pid].source == source
        ]
        return [r for score, _, r in sorted(scored, key=lambda s: (-s[0], s[1]))[:limit] if score > 0]


def _id(written: str) -> str:
    """'r-hsa-70171' → 'R-HSA-70171', 'HSA04110' → 'hsa04110'."""
    return written.upper() if written.upper().startswith("R-") else written.lower()


def _unique(refs: Iterable[PathwayRef]) -> list[PathwayRef]:
    out: dict[str, PathwayRef] = {}
    for ref in refs:
        out.setdefault(ref.id, ref)
    return list(out.values())


def _modified(words: list[str], start: int, refs: list[PathwayRef]) -> bool:
    """The name is preceded by a content word that no pathway of that name holds: a longer, different name."""
    before = words[start - 1] if start else ""
    name_words = {w for ref in refs for w in canonical_words(ref.name)}
    return (
        len(before) >= MIN_MODIFIER_LENGTH and before.isalpha() and before not in _GENERIC and before not in name_words
    )


def _name_forms(name: str) -> list[str]:
    """The name, and where it ends in a parenthesised short form, each part alone: 'Citric acid cycle (TCA
    cycle)' is also 'Citric acid cycle' and 'TCA cycle'."""
    match = re.fullmatch(r"(.+?)\s*\(([^()]{3,})\)\s*", name)
    return [name, match.group(1), match.group(2)] if match else [name]


def _adjacent_source(words: list[str], start: int, end: int) -> bool:
    """A database word right before the name ("KEGG cell cycle … Reactome cell cycle"): that database's one."""
    if start > 2 and words[start - 2] in {"and", "or"} and words[start - 3] in _SOURCE_WORD:
        return False  # "the KEGG and Reactome apoptosis pathways": both
    return (start > 0 and words[start - 1] in _SOURCE_WORD) or (
        start > 1 and words[start - 2] in _SOURCE_WORD and words[start - 1] in {"the", "s"}
    )


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
        rows = conn.execute(
            text("SELECT pathway_id, source, name FROM pathways WHERE status = 'active' ORDER BY pathway_id")
        ).all()
        reactions = read_reactions(conn)
        diseases = read_diseases(conn)
    return PathwayLexicon([(r.pathway_id, r.source, r.name) for r in rows], reactions, diseases)


_lexicons = PerIndex(_read_pathways)


def load_pathways(engine: Engine, version: str) -> PathwayLexicon:
    """One lexicon per (database, index version) per process."""
    return _lexicons.get(engine, version)
