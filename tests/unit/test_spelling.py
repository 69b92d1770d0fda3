"""Typo correction and fuzzy pathway matching give the same answers as the plain definitions they speed up:
difflib over the whole vocabulary, and the fuzzy rule's share computed word by word for every pathway."""

from __future__ import annotations

import difflib
import random
import string

import pytest

from retrieval.answering.offline import sentences
from retrieval.model.pathways import _GENERIC, PathwayLexicon
from retrieval.model.spelling import CORRECTION_TARGETS, MIN_TYPO_LENGTH, TYPO_CUTOFF, TypoCorrector

NAMES = [
    "Glycolysis / Gluconeogenesis",
    "Citric acid cycle (TCA cycle)",
    "Apoptosis",
    "Signal Transduction",
    "Cell cycle",
    "Cell Cycle, Mitotic",
    "MAPK signaling pathway",
    "Mismatch repair",
    "Oxidative phosphorylation",
    "Pentose phosphate pathway",
    "Fatty acid degradation",
    "Purine metabolism",
    "Pyrimidine metabolism",
    "p53 signaling pathway",
    "Wnt signaling pathway",
    "Hedgehog signaling pathway",
    "Notch signaling pathway",
    "Regulation of TP53 Activity",
    "Insulin receptor signalling cascade",
    "Ubiquitin mediated proteolysis",
    "Steroid hormone biosynthesis",
    "Glutathione metabolism",
    "Nucleotide excision repair",
    "Autophagy",
    "Interleukin-4 and Interleukin-13 signaling",
    "Cholesterol biosynthesis",
    "Peroxisome",
    "Lysosome",
]
LEXICON = PathwayLexicon([(f"P{n}", "kegg" if n % 2 else "reactome", name) for n, name in enumerate(NAMES)])


def _edits(word: str, rng: random.Random) -> str:
    """One or two random deletions, insertions, substitutions or swaps."""
    for _ in range(rng.choice((1, 2))):
        i = rng.randrange(len(word))
        letter = rng.choice(string.ascii_lowercase)
        word = rng.choice(
            (
                word[:i] + word[i + 1 :],
                word[:i] + letter + word[i:],
                word[:i] + letter + word[i + 1 :],
                word[:i] + word[i + 1 : i + 2] + word[i : i + 1] + word[i + 2 :],
            )
        )
    return word or "x"


def _words() -> list[str]:
    rng = random.Random(7)
    vocabulary = sorted(
        {w.lower() for name in NAMES for w in name.replace("/", " ").split() if w.isalpha()} | CORRECTION_TARGETS
    )
    typos = [_edits(rng.choice(vocabulary), rng) for _ in range(600)]
    noise = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 16))) for _ in range(200)]
    return typos + noise


def test_typo_correction_matches_difflib_over_the_whole_vocabulary() -> None:
    vocabulary = {w.lower() for name in NAMES for w in name.replace("/", " ").split() if w.isalpha()}
    corrector = TypoCorrector(vocabulary)
    everything = sorted(w for w in vocabulary | CORRECTION_TARGETS if len(w) >= MIN_TYPO_LENGTH and w.isalpha())
    changed = 0
    for word in _words():
        if word in vocabulary | CORRECTION_TARGETS or len(word) < MIN_TYPO_LENGTH or not word.isalpha():
            continue
        close = difflib.get_close_matches(word, everything, n=1, cutoff=TYPO_CUTOFF)
        expected = close[0] if close else word
        assert corrector.correct(word) == expected, word
        assert corrector.correct(word) == expected, f"{word} (asked again)"
        changed += expected != word
    assert changed > 100  # the words exercise corrections, not only misses


def _fuzzy_by_definition(question: str, source: str, minimum: float, ignore: frozenset[str]) -> str | None:
    """The fuzzy rule as documented: the best share of a name's words held, among the names whose words also cover
    `minimum` of the question's content words (symbol-like words counted only when the name has them)."""
    words, _ = LEXICON.read(question)
    have = {w for w in words if w not in _GENERIC and len(w) > 1}
    best = None
    for ref in LEXICON.by_id.values():
        name = {t for t in LEXICON._tokens[ref.id]}
        if not name or (source and ref.source != source):
            continue
        shared = len(name & have)
        asked = len({w for w in have if w in name or (w not in ignore and not any(c.isdigit() for c in w))})
        candidate = (shared / len(name), len(name), ref.id)
        if shared / max(asked, 1) >= minimum and (best is None or candidate[:2] > best[:2]):
            best = candidate
    return best[2] if best and best[0] >= minimum else None


@pytest.mark.parametrize("source", ["", "kegg", "reactome"])
def test_fuzzy_pathway_matching_picks_what_its_rule_defines(source: str) -> None:
    rng = random.Random(11)
    pool = [w for name in NAMES for w in name.replace("/", " ").replace(",", " ").split()] + [
        "TP53",
        "2",
        "genes",
        "which",
        "the",
        "of",
        "pathway",
        "kras",
        "hormone",
        "plant",
    ]
    found = 0
    for _ in range(400):
        question = " ".join(rng.choice(pool) for _ in range(rng.randint(1, 6)))
        for minimum in (0.5, 0.6):
            ignore = frozenset({"tp53"}) if rng.random() < 0.5 else frozenset()
            ref = LEXICON.fuzzy(question, source=source, minimum=minimum, ignore=ignore)
            assert (ref.id if ref else None) == _fuzzy_by_definition(question, source, minimum, ignore), question
            found += ref is not None
    assert found > 100


def test_sentences_of_a_text_are_the_same_each_time_and_a_caller_cannot_change_them() -> None:
    text = "Glycolysis converts glucose into pyruvate. It yields two ATP per glucose molecule. Is that all?"
    first = sentences(text)
    assert first == ["Glycolysis converts glucose into pyruvate.", "It yields two ATP per glucose molecule."]
    first.append("a sentence the text does not hold")
    assert sentences(text) == first[:2]


def test_an_english_word_as_written_is_never_read_as_a_name_word() -> None:
    """PubMedQA's "…remodelling lace plant leaves…" was read as "plate cleave" against name words of the snapshot
    (platelet and cleavage pathways): an English word is left as written; a misspelt one is still corrected."""
    corrector = TypoCorrector({"plate", "cleave", "glycolysis", "pathway"})
    question = "Do mitochondria play a role in remodelling lace plant leaves during programmed cell death?"
    assert corrector.corrections(question) == {}
    assert corrector.corrections("Which genes are in glycolisis, and which patwhays?") == {
        "glycolisis": "glycolysis",
        "patwhays": "pathways",
    }
    assert corrector.correct("plant") == "plate"  # what reading it without the English words would do
