"""Conditions in questions: ClinVar's conditions (MedGen concepts) by name, from the `diseases` table (Postgres, read
with the pathway lexicon), so a question is read without the graph.

Names are compared normalised: case and punctuation folded, Roman numerals after "type" (and ii…ix anywhere) read as
numbers, so "Diabetes Mellitus, Type II" is "diabetes mellitus type 2". A question names a condition when a span of
its words is a condition's whole name; failing that, when a span is within a small edit distance of one (typos), by
rapidfuzz's ratio, and is a typo of it word by word (`typo_of`: "Laron syndrome" is not "Larsen syndrome", nor
"polycystic kidney disease 1" type 2, nor "syndrome" "C syndrome"). Spans scoring the same against several
conditions are all returned, so an answer can list the candidates rather than pick one. ClinVar's placeholders
("not provided", "not specified") are never matched.

A condition is also named by its MONDO synonyms (`condition_synonyms`, loaded with the conditions: "Hay-Wells
syndrome" names ClinVar's "Ankyloblepharon-ectodermal defects-cleft lip/palate syndrome"), matched whole and never
fuzzily: the longest span wins, and where a span is a ClinVar name and a synonym of another condition as long, the
name wins. A synonym that names several conditions gives them all, as candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz, process
from sqlalchemy import text
from sqlalchemy.engine import Connection

from retrieval.model.spelling import fold
from retrieval.model.terms import QUESTION_STOPWORDS

ROMAN = {
    "i": "1",
    "ii": "2",
    "iii": "3",
    "iv": "4",
    "v": "5",
    "vi": "6",
    "vii": "7",
    "viii": "8",
    "ix": "9",
    "x": "10",
    "xi": "11",
    "xii": "12",
}
_UNAMBIGUOUS_ROMAN = frozenset({"ii", "iii", "iv", "vi", "vii", "viii", "ix", "xi", "xii"})  # not "I", "V", "X"
_TYPE_WORDS = frozenset({"type", "types", "class", "grade", "group", "stage", "form", "subtype", "complementation"})
PLACEHOLDERS = frozenset({"not provided", "not specified", "see cases", "none provided"})
FUZZY_CUTOFF = 88.0  # rapidfuzz ratio (0-100): one or two letters off in a name of a dozen
MIN_FUZZY_LENGTH = 8  # shorter spans match only exactly: "MODY" is no typo of "MODS"
WORD_TYPO = 80.0  # rapidfuzz ratio of two words: one letter off in five ("diabets" / "diabetes" is 93)
MAX_SPAN = 12  # words
MATCH_CACHE = 64  # questions whose reading is kept
_EDGE_STOPS = QUESTION_STOPWORDS - {"type", "types", "one", "two"}  # words a condition's name may start or end with
# A name is also read without a last generic word, where no other name is that shorter form.
GENERIC_END = re.compile(r"\s+(?:syndrome|disease|disorder)$")


def typo_of(asked: list[str], name: list[str]) -> bool:
    """Whether the words asked are the name's with typos: the same words but for letters (each pair at least
    WORD_TYPO alike; "type" and the like ignored), and the same numbers, or none asked where the name ends with
    one (its subtypes, listed as candidates)."""
    asked = [w for w in asked if w not in _TYPE_WORDS]
    name = [w for w in name if w not in _TYPE_WORDS]
    asked_numbers = [w for w in asked if w.isdigit()]
    name_numbers = [w for w in name if w.isdigit()]
    if asked_numbers != name_numbers and not (not asked_numbers and name_numbers == name[-1:]):
        return False
    words, other = [w for w in asked if not w.isdigit()], [w for w in name if not w.isdigit()]
    return len(words) == len(other) and all(fuzz.ratio(a, b) >= WORD_TYPO for a, b in zip(words, other, strict=True))


def normalise(name: str) -> str:
    words = fold(name).split()
    out = []
    for i, word in enumerate(words):
        after_type = i > 0 and words[i - 1] in _TYPE_WORDS
        out.append(ROMAN[word] if word in ROMAN and (after_type or word in _UNAMBIGUOUS_ROMAN) else word)
    return " ".join(out)


@dataclass(frozen=True)
class Condition:
    id: str  # MedGen concept
    name: str


@dataclass(frozen=True)
class ConditionMatch:
    conditions: tuple[Condition, ...]  # more than one: the words name several conditions equally well
    asked: str  # the words of the question that named it
    exact: bool


@dataclass
class DiseaseLexicon:
    conditions: dict[str, Condition] = field(default_factory=dict)
    synonyms: dict[str, list[str]] = field(default_factory=dict)  # concept id → its MONDO synonyms
    _by_name: dict[str, list[str]] = field(default_factory=dict)  # normalised name → concept ids
    _by_synonym: dict[str, list[str]] = field(default_factory=dict)  # normalised synonym → concept ids
    _names: list[str] = field(default_factory=list)
    _match: Callable[[str, frozenset[str]], ConditionMatch | None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by_name: dict[str, list[str]] = {}
        for condition in self.conditions.values():
            key = normalise(condition.name)
            if key and key not in PLACEHOLDERS:
                by_name.setdefault(key, []).append(condition.id)
        for condition in self.conditions.values():  # "ataxia-telangiectasia" for "Ataxia-telangiectasia syndrome"
            key = normalise(condition.name)
            short = GENERIC_END.sub("", key)
            if short != key and len(short) >= MIN_FUZZY_LENGTH and short not in by_name:
                by_name.setdefault(short, []).append(condition.id)
        self._by_name = {k: sorted(set(v)) for k, v in by_name.items()}
        self._names = list(self._by_name)
        by_synonym: dict[str, set[str]] = {}
        for concept_id, synonyms in self.synonyms.items():
            for synonym in synonyms:
                key = normalise(synonym)
                if key and key not in self._by_name and concept_id in self.conditions:
                    by_synonym.setdefault(key, set()).add(concept_id)
        self._by_synonym = {k: sorted(v) for k, v in by_synonym.items()}
        # Several recognisers read one question (and serving shares a lexicon between requests): match once.
        self._match = lru_cache(maxsize=MATCH_CACHE)(self._match_once)

    def __len__(self) -> int:
        return len(self.conditions)

    def match(self, question: str, ignore: frozenset[str] = frozenset()) -> ConditionMatch | None:
        """The condition the question names: the longest span that is a whole name, else the closest span within
        the fuzzy cutoff (ties listed). `ignore`: folded words that name something else (gene symbols)."""
        return self._match(question, ignore)

    def _match_once(self, question: str, ignore: frozenset[str]) -> ConditionMatch | None:
        words = [w for w in normalise(question).split()]
        spans = [
            (i, j)
            for i in range(len(words))
            for j in range(min(len(words), i + MAX_SPAN), i, -1)
            if not set(words[i:j]) <= ignore
        ]
        # (length, a ClinVar name over a synonym, the words): the longest span, a name where one is as long.
        exact = [
            (j - i, span in self._by_name, span)
            for i, j in spans
            if (span := " ".join(words[i:j])) in self._by_name or span in self._by_synonym
        ]
        if exact:
            _, is_name, name = max(exact)
            ids = self._by_name[name] if is_name else self._by_synonym[name]
            return ConditionMatch(self._conditions(ids), name, True)
        # A number after the words is part of the name asked ("… disease 1"): no closest name may drop it.
        return self._fuzzy([" ".join(words[i:j]) for i, j in spans if j == len(words) or not words[j].isdigit()])

    def _fuzzy(self, spans: list[str]) -> ConditionMatch | None:
        best: tuple[float, int, str, list[str]] | None = None
        for span in spans:
            edges = span.split()
            # A name neither starts nor ends with a function word ("with …", "… of the"): fewer spans to score.
            if len(span) < MIN_FUZZY_LENGTH or edges[0] in _EDGE_STOPS or edges[-1] in _EDGE_STOPS:
                continue
            found = process.extract(span, self._names, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=5)
            found = [f for f in found if typo_of(edges, f[0].split())]
            if not found:
                continue
            top = found[0][1]
            names = [name for name, score, _ in found if score == top]
            if best is None or (top, len(span)) > (best[0], best[1]):
                best = (top, len(span), span, names)
        if best is None:
            return None
        ids = sorted({cid for name in best[3] for cid in self._by_name[name]})
        return ConditionMatch(self._conditions(ids), best[2], False)

    def _conditions(self, ids: list[str]) -> tuple[Condition, ...]:
        return tuple(self.conditions[i] for i in ids)


_MEDGEN = re.compile(r"^CN?\d+$")
READ = "SELECT concept_id, name FROM diseases ORDER BY concept_id"
READ_SYNONYMS = "SELECT concept_id, synonym FROM condition_synonyms ORDER BY concept_id, synonym"


def read_diseases(conn: Connection) -> DiseaseLexicon:
    rows = conn.execute(text(READ)).all()
    synonyms: dict[str, list[str]] = {}
    if conn.execute(text("SELECT to_regclass('condition_synonyms') IS NOT NULL")).scalar_one():
        for row in conn.execute(text(READ_SYNONYMS)):
            synonyms.setdefault(row.concept_id, []).append(row.synonym)
    conditions = {r.concept_id: Condition(r.concept_id, r.name) for r in rows if _MEDGEN.match(r.concept_id)}
    return DiseaseLexicon(conditions, synonyms)
