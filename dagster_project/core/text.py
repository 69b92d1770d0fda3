"""The one word tokenizer and the one English stop-word list for general text (questions, evidence, pathway names).

Every stop list is written here, once. The list is nested in four tiers, smallest first, because each consumer was
fitted on its tier and dropping more words would change what it scores or matches:

- `CONNECTIVES`: articles, "and" and the prepositions that join the parts of a name ("Regulation of X by Y in Z");
  pathway-name comparison (dagster_project/resolution/scores.py) drops only these, plus its own words.
- `SHORT_STOPWORDS`: the connectives and the rest of Lucene's English list, which is bm25s' built-in "english"
  list; the BM25 index is tokenized with it (retrieval/retrievers/bm25.py), so changing it changes the index.
- `STOPWORDS`: all general English function words; the question terms (retrieval/model/terms.py) drop these
  plus the words questions are phrased with ("tell", "explain", ...).
- `BROAD_STOPWORDS`: the function words and common English words that name no topic ("actually", "get",
  "several"); the answer cache (retrieval/caching/cache.py) counts none of them, nor its request words, as a
  question's distinctive tokens, so changing it changes which cached answers a question may reuse.

One list is not a tier: `CONCEPT_JOINERS`, the words the PubMed translation check does not look for in a translation
(retrieval/pubmed/translation.py): the connectives, "or" and the prepositions a search concept is phrased with.

Domain words ("pathway", "signaling"; "tell", "list") are not here: each consumer names its own small extension.
Dagster-free: the retrieval layer imports it.
"""

from __future__ import annotations

import re
from functools import cache

# Each tier adds to the one before.
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
_BROAD_REST = """
across almost along already although always among another anyone anything around ask asked away back became become
best better came cannot different done either else enough even ever every find first found full get gets give given go
goes going good got great herself himself however keep kind know known last least less let like likely made main make
makes many may might mostly much must myself near need never new next none often one onto others ours part per perhaps
put quite rather really right role said say see seem seems several shall show shown since something sometimes still
take theirs themselves thing things though thus together toward towards upon us use used uses using usually via way
well whatever whether within without yet yours yourself
"""
CONNECTIVES = frozenset(_CONNECTIVES.split())
SHORT_STOPWORDS = CONNECTIVES | frozenset(_SHORT_REST.split())
STOPWORDS = SHORT_STOPWORDS | frozenset(_GENERAL_REST.split())
BROAD_STOPWORDS = STOPWORDS | frozenset(_BROAD_REST.split())

# Not a tier: the connectives, "or" and the prepositions of a search concept ("aspirin versus placebo after stroke").
# The translation check was fitted on this list; STOPWORDS would drop more of a concept's words ("before", "over",
# "no") and so report fewer of them missing from a translation.
_CONCEPT_JOINER_REST = "after among as at during for from into on or versus via vs with"
CONCEPT_JOINERS = CONNECTIVES | frozenset(_CONCEPT_JOINER_REST.split())

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
