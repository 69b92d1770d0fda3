"""The polarity of a yes/no question or a statement to confirm.

"True or false: Fabry disease is not associated with GLA", "Glycolysis is not part of Metabolism, right?", "Is X not
in Y?": the relation is read from the sentence without its negation, and the plan keeps `negated`, so the verdict
answers the sentence as written (a relation that holds makes a negated statement false). A negative question that
only leans one way — "Isn't X part of Y?", "Doesn't X contain Y?" — asks about the relation itself (its answer is the
same as "Is X part of Y?") and is not negated; so does "Isn't it true that S?", which asks about S. Two negations
in the sentence cancel ("True or false: it is not the case that D is not associated with G" states that it is).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A statement's frame, kept as written so the reader still sees a statement to confirm.
_FRAME = re.compile(
    r"^\s*(?:true or false|is it (?:true|correct|right|the case) that|can you confirm(?: that)?|confirm that|"
    r"(?:is|isn't|is it not) (?:it )?(?:true|correct|the case) that)\s*[:,-]?\s*",
    re.I,
)
# "Isn't X …?" / "Doesn't X …?": a question that leans towards yes, about the positive relation.
_LEANING = re.compile(
    r"^(\s*)(is|are|was|were|does|do|did|has|have|can)n't\b|^(\s*)(can)not\b",
    re.I,
)
# "Is it not true that …" / "Isn't it true that …": the frame leans the same way, and negates nothing.
_LEANING_FRAME = re.compile(r"^\s*(?:is it not|isn't it|is not it)\s+(?:true|correct|the case)\s+that\b", re.I)
# Negations inside the clause, each with what the positive sentence keeps in its place.
_NEGATIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(is|are|was|were|does|do|did|has|have|could|would|should)n't\b", re.I), r"\1"),
    (re.compile(r"\bcan't\b|\bcannot\b", re.I), "can"),
    (re.compile(r"\bno longer\b", re.I), ""),
    (re.compile(r"\bnever\b", re.I), ""),
    # "not", but not "or not", "whether or not", "not only" (a question, an emphasis: no negation)
    (re.compile(r"(?<!\bor )\bnot\b(?!\s+only\b)", re.I), ""),
)


@dataclass(frozen=True)
class Polarity:
    """The question as written, the same sentence with its negations taken out, and whether it denies the
    relation it names (an odd number of negations)."""

    question: str
    positive: str
    negated: bool
    negations: int

    @property
    def changed(self) -> bool:
        return self.positive != self.question


def polarity(question: str) -> Polarity:
    text = question
    leaning_frame = _LEANING_FRAME.match(text)
    if leaning_frame:  # "Isn't it true that S?" asks "Is it true that S?"
        text = "Is it true that" + text[leaning_frame.end() :]
    else:
        text = _LEANING.sub(lambda m: f"{m.group(1) or m.group(3) or ''}{m.group(2) or m.group(4)}", text, count=1)
    frame = _FRAME.match(text)
    head, clause = (text[: frame.end()], text[frame.end() :]) if frame else ("", text)
    count = 0
    for pattern, keep in _NEGATIONS:
        clause, n = pattern.subn(keep, clause)
        count += n
    positive = head + re.sub(r"\s{2,}", " ", clause).strip()
    if not positive.strip():
        positive = question
    return Polarity(question=question, positive=positive, negated=count % 2 == 1, negations=count)


def verdict(holds: bool, negated: bool) -> str:
    """The first word of a yes/no answer: about the relation ("Yes", "No"), or, for a sentence that denies it,
    about the sentence as written ("True": it is indeed not so; "False": the relation holds)."""
    if negated:
        return "False" if holds else "True"
    return "Yes" if holds else "No"
