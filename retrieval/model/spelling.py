"""Spelling-tolerant name matching: one canonical form per word, and typo correction against a known vocabulary.

Pathway names are matched on canonical words, the same function applied to the name and to the question, so
"signalling" meets "signaling", "tumour" meets "tumor", "cycles" meets "cycle". A question word that is in no name
is corrected to the closest name word when it is one or two edits away (difflib's ratio, stdlib): "glycolisis" →
"glycolysis". Identifiers (a digit or an inner capital: TP53, PI3K) are never corrected, nor is an English word as
written (pyspellchecker's English list, about 160,000 words): "plant leaves" is never read as "plate cleave".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import cache, lru_cache

# British → American, as a few suffix and prefix rules plus the words no rule covers.
_WORDS = {
    "tumour": "tumor",
    "tumours": "tumors",
    "colour": "color",
    "behaviour": "behavior",
    "favour": "favor",
    "fibre": "fiber",
    "centre": "center",
    "sulphur": "sulfur",
    "sulphate": "sulfate",
    "aluminium": "aluminum",
    "grey": "gray",
    "programme": "program",
    "catalyse": "catalyze",
    "catalysed": "catalyzed",
}
_RULES = (
    (re.compile(r"(?<=[a-z])lling$"), "ling"),
    (re.compile(r"(?<=[a-z])lled$"), "led"),
    (re.compile(r"aem"), "em"),
    (re.compile(r"^oe(?=[a-z]{3})"), "e"),
    (re.compile(r"isation$"), "ization"),
    (re.compile(r"ysed$"), "yzed"),
    (re.compile(r"yse$"), "yze"),
)
# Endings that are not a plural "s": apoptosis, virus, process, hepatitis.
_NOT_PLURAL = ("ss", "is", "us", "os", "as", "ys")
MIN_TYPO_LENGTH = 5
TYPO_CUTOFF = 0.8  # difflib ratio: one edit in a 5-9 letter word, two in a long one
CORRECTION_CACHE = 65_536  # distinct unknown words remembered per vocabulary


def canonical(word: str) -> str:
    """One spelling per word: American, singular, lower case."""
    w = _WORDS.get(word, word)
    for pattern, replacement in _RULES:
        w = pattern.sub(replacement, w)
    if len(w) > 4 and w.endswith("s") and not w.endswith(_NOT_PLURAL):
        w = w[:-1]
    return w


def fold(value: str) -> str:
    """Lower case, punctuation to spaces: 'Glycolysis / Gluconeogenesis' → 'glycolysis gluconeogenesis'."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", value.lower()).split())


def canonical_words(value: str) -> list[str]:
    return [canonical(w) for w in fold(value).split()]


# Words questions are asked with that a typo is corrected to, besides the pathway-name words ("patwhays",
# "invovled", "cytoabnd"); written correctly they are left as they are.
_CORRECTION_TARGETS = """
pathway pathways genes members member involved participates participate identifiers identifier chromosome cytoband
pseudogene protein coding location located symbol official approved subpathways compounds compound metabolites
metabolite contain contains containing include includes including belong belongs counterpart equivalent
corresponds correspond overview describe compare comparison difference different shared common between hierarchy
parent parents children references accession accessions ensembl uniprot entrez underneath beneath appear appears
database databases summary summarise summarize genome transcript
"""
CORRECTION_TARGETS = frozenset(canonical(w) for w in _CORRECTION_TARGETS.split())
# Words the question kinds read that are never typos of a pathway-name word: left as written, never a target
# ("action" must not become "reaction", nor "metabolic" "metabolite").
_KEPT_WORDS = """
metabolic signalling disease drug variant mutation expressed expression trial structure reaction downstream upstream
connect connects connected connection linked link related relationship associated association true false same
identical category part within inside action mechanism inhibitor pathogenic tissue crystal catalyse catalyze
"""
KEPT_WORDS = frozenset(canonical(w) for w in _KEPT_WORDS.split())


@cache
def english_words() -> frozenset[str]:
    """The English words a question may use as written (pyspellchecker's English frequency list, read once)."""
    from spellchecker import SpellChecker

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.dictionary)


class TypoCorrector:
    """Corrects a word to the closest word of a vocabulary (pathway-name words and question words), or leaves
    it."""

    def __init__(self, vocabulary: Iterable[str], keep: Iterable[str] = ()) -> None:
        words = set(vocabulary) | CORRECTION_TARGETS
        self._by_length: dict[int, list[str]] = {}
        for w in sorted(w for w in words if len(w) >= MIN_TYPO_LENGTH and w.isalpha()):
            self._by_length.setdefault(len(w), []).append(w)
        self._known = words | set(keep) | KEPT_WORDS
        # Questions repeat their words (and a question is read several times while it is classified).
        self._closest = lru_cache(maxsize=CORRECTION_CACHE)(self._closest_once)

    def correct(self, word: str) -> str:
        if word in self._known or len(word) < MIN_TYPO_LENGTH or not word.isalpha():
            return word
        return self._closest(word)

    def _closest_once(self, word: str) -> str:
        close = difflib.get_close_matches(word, self._candidates(len(word)), n=1, cutoff=TYPO_CUTOFF)
        return close[0] if close else word

    def _candidates(self, length: int) -> list[str]:
        """The vocabulary words whose length alone allows a ratio at the cutoff: 2·min(a, b) / (a + b) is the
        best ratio two lengths can give (difflib's real_quick_ratio), so the answer is the same as over the whole
        vocabulary, without scoring the words that could never pass."""
        return [w for n, ws in self._by_length.items() if 2 * min(n, length) / (n + length) >= TYPO_CUTOFF for w in ws]

    def corrections(self, question: str) -> dict[str, str]:
        """Question word (lower case, as written) → the known word it was read as, for the words that changed.
        Identifiers never change."""
        changed = {}
        for raw in re.findall(r"[A-Za-z0-9]+", question):
            if any(ch.isdigit() for ch in raw) or any(ch.isupper() for ch in raw[1:]):
                continue  # TP53, PI3K, mTOR: identifiers, not misspelt words
            word = canonical(raw.lower())
            if word not in self._known and (raw.lower() in english_words() or word in english_words()):
                continue  # a word of the language, not a misspelt name word
            fixed = self.correct(word)
            if fixed != word:
                changed[raw.lower()] = fixed
        return changed


def apply_corrections(question: str, corrections: dict[str, str]) -> str:
    """The question with each corrected word replaced where it stands."""
    if not corrections:
        return question
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, corrections)) + r")\b", re.I)
    return pattern.sub(lambda m: corrections[m.group(0).lower()], question)
