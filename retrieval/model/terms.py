"""Word-level helpers shared by the router, the offline provider and the judge: words, key terms, entities.

Words and the English stop words come from dagster_project/core/text.py, the one tokenizer and stop list; here they
are extended with the words questions are phrased with (`PHRASING_WORDS`), which are never key terms, into
`QUESTION_STOPWORDS`.
"""

from __future__ import annotations

from dagster_project.core.text import STOPWORDS, words

# How a question is asked, not what it is about.
_PHRASING_WORDS = """
tell explain describe give list show name known role involved involve relate related relationship function
functions work works happen happens mean means please kind type types way ways much many one two
play plays played contain contains containing correspond corresponds corresponding well
"""
PHRASING_WORDS = frozenset(_PHRASING_WORDS.split())
# What a question's content words and key terms drop.
QUESTION_STOPWORDS = STOPWORDS | PHRASING_WORDS

__all__ = [
    "PHRASING_WORDS",
    "QUESTION_STOPWORDS",
    "content_words",
    "entities",
    "key_terms",
    "stem",
    "without_possessive",
    "words",
]


def content_words(text: str) -> list[str]:
    """Words that carry meaning (not stopwords, not a single character), in order, original case kept."""
    return [w for w in words(text) if w.lower() not in QUESTION_STOPWORDS and len(w) > 1]


def entities(text: str) -> list[str]:
    """Identifier-like tokens and capitalised names: TP53, PI3K, R-HSA-70171, hsa00010, KEGG, Reactome."""
    found = [
        w
        for w in words(text)
        if any(c.isdigit() for c in w)
        or any(c.isupper() for c in w[1:])
        or (w[:1].isupper() and w.lower() not in QUESTION_STOPWORDS)
    ]
    return list(dict.fromkeys(found))


def without_possessive(token: str) -> str:
    """ "BUB1's" → "BUB1" (straight or curly apostrophe)."""
    return token.removesuffix("'s").removesuffix("\u2019s")


def stem(word: str) -> str:
    """A crude prefix stem so 'glycolytic' meets 'glycolysis' and 'genes' meets 'gene' in coverage checks.

    Deliberately not Snowball (PyStemmer): Snowball keeps 'glycolyt' apart from 'glycolysi' and a misspelt
    'Glycolisis' apart from 'glycolysis', which the six-letter prefix joins. Measured on the 294 analyst questions
    (dev + held-out) over the demo corpus, Snowball changed 25 offline-judge verdicts, 61 extractive answers and one
    evidence-floor refusal, and 305 of the 2,000 PubMedQA coverages the judge threshold is fitted on; the judge's
    and the floor's thresholds were fitted with this stem."""
    w = word.lower().strip("'")
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w[:6]


def key_terms(text: str) -> list[str]:
    return list(dict.fromkeys(stem(w) for w in content_words(text)))
