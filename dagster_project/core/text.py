"""The one word tokenizer and the one English stop-word list for general text (questions, evidence, pathway names).

Every stop word is written here once. The list is nested in three tiers, smallest first, because some consumers were
fitted on a shorter list and dropping more words would change what they score:

- `CONNECTIVES`: articles, "and" and the prepositions that join the parts of a name ("Regulation of X by Y in Z");
  pathway-name comparison (dagster_project/resolution/scores.py) drops only these, plus its own words.
- `SHORT_STOPWORDS`: the connectives and the rest of Lucene's English list, which is bm25s' built-in "english"
  list; the BM25 index is tokenized with it (retrieval/retrievers/bm25.py), so changing it changes the index.
- `STOPWORDS`: all general English function words; the question terms (retrieval/model/terms.py) drop these
  plus the words questions are phrased with ("tell", "explain", ...).

Domain words ("pathway", "signaling"; "tell", "list") are not here: each consumer names its own small extension.
Dagster-free: the retrieval layer imports it.
"""

from __future__ import annotations

import re
from functools import cache

# Each tier adds to the one before; STOPWORDS is their union.
_CONNECTIVES = "a an and by in of the to"
_SHORT_REST = """
are as at be but for if into is it no not on or such that their then there these they this was will with
"""
_GENERAL_REST = """
about above after again against all also am any because been before being below between both can could did do does
doing down during each few from further had has have having he her here hers him his how i its itself just me more
most my nor now off once only other our out over own same she should so some than them those through too under
until up very we were what when where which while who whom whose why would you your
"""
CONNECTIVES = frozenset(_CONNECTIVES.split())
SHORT_STOPWORDS = CONNECTIVES | frozenset(_SHORT_REST.split())
STOPWORDS = SHORT_STOPWORDS | frozenset(_GENERAL_REST.split())

# A word: ASCII letters and digits, with these characters allowed inside it so that ids and compounds stay whole
# (R-HSA-70171, G1/S, Crohn's).
WORD_JOINERS = "'/-"


@cache
def _word_pattern(joined_by: str) -> re.Pattern[str]:
    return re.compile(rf"[A-Za-z0-9][A-Za-z0-9{re.escape(joined_by)}]*")


def words(text: str, joined_by: str = WORD_JOINERS) -> list[str]:
    """The words of `text` in order, case kept. A word starts with a letter or digit and runs over letters, digits and
    the characters of `joined_by`; a narrower `joined_by` splits more ("" splits "G1/S" and "R-HSA-70171" apart)."""
    return _word_pattern(joined_by).findall(text)
