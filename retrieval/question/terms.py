"""Word-level helpers shared by the router, the offline provider and the judge: words, key terms, entities."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'/-]*")
# Question scaffolding and function words: never key terms.
_STOPWORDS = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our out over own same she should so some such than that the their them then there these they this those through
to too under until up very was we were what when where which while who whom whose why will with would you your
tell explain describe give list show name known role involved involve relate related relationship function
functions work works happen happens mean means please kind type types way ways much many one two
play plays played contain contains containing correspond corresponds corresponding well does doing
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def content_words(text: str) -> list[str]:
    """Words that carry meaning (not stopwords, not a single character), in order, original case kept."""
    return [w for w in words(text) if w.lower() not in STOPWORDS and len(w) > 1]


def entities(text: str) -> list[str]:
    """Identifier-like tokens and capitalised names: TP53, PI3K, R-HSA-70171, hsa00010, KEGG, Reactome."""
    found = [w for w in words(text) if any(c.isdigit() for c in w) or any(c.isupper() for c in w[1:])
             or (w[:1].isupper() and w.lower() not in STOPWORDS)]
    return list(dict.fromkeys(found))


def stem(word: str) -> str:
    """A crude prefix stem so 'glycolytic' meets 'glycolysis' and 'genes' meets 'gene' in coverage checks."""
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
