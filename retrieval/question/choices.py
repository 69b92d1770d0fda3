"""Multiple-choice questions: "Which of GCK, TP53 and PKM is in KEGG glycolysis?", "Which of the following
pathways contain PKM: glycolysis, apoptosis, cell cycle?", "Which of Metabolism or Disease does Glycolysis belong
to?". The options are split off and each is asked as its own yes/no question, in the sentence's own words; the
registry reads those and joins them into one check when they differ only in the option."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEAD = re.compile(
    r"^\s*(?:(?:true or false|quick question|so|and)\W+)?which\s+(?:one\s+|ones\s+)?of\s+"
    r"(?:the\s+following\s+|these\s+|those\s+|the\s+)?(?:(?:genes?|pathways?|conditions?|diseases?|compounds?|"
    r"options?|choices?|answers?)\s*)?",
    re.I,
)
# Where the option list ends and what is said of each option begins.
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|does|do|did|has|have|contains?|includes?|belongs?|falls?|sits?|lies?|"
    r"participates?|takes?|appears?|maps?|corresponds?|can|could)\b",
    re.I,
)
_BE = re.compile(r"^(?:is|are|was|were)\s+", re.I)
_DO = re.compile(r"^(?:does|do|did)\s+", re.I)
_BASE = {
    "contains": "contain",
    "includes": "include",
    "belongs": "belong",
    "falls": "fall",
    "sits": "sit",
    "lies": "lie",
    "participates": "participate",
    "takes": "take",
    "has": "have",
    "appears": "appear",
    "maps": "map",
    "corresponds": "correspond",
}
_QUOTES = " '\"\u201c\u201d\u2018\u2019"  # straight and curly quotes around an option
_SPLIT = re.compile(r"\s*[,;/]\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.I)


@dataclass(frozen=True)
class Choice:
    """The options of a multiple-choice question and what it says of each."""

    options: list[str]
    predicate: str  # "is a member of KEGG glycolysis", "contain PKM", "does Glycolysis belong to"

    def asked(self, option: str) -> str:
        """The yes/no question for one option, in the sentence's words."""
        if _BE.match(self.predicate):
            return f"Is {option} {_BE.sub('', self.predicate)}?"
        if _DO.match(self.predicate):  # the option is the object: "does Glycolysis belong to" + option
            return f"Does {_DO.sub('', self.predicate)} {option}?"
        verb, _, rest = self.predicate.partition(" ")
        return f"Does {option} {_BASE.get(verb.lower(), verb)} {rest}".rstrip() + "?"


def multiple_choice(question: str) -> Choice | None:
    """The options and predicate of "which of A, B … <predicate>?" or "which of the following <predicate>: A, B …";
    None for any other question, or a list of fewer than two options."""
    lead = _LEAD.match(question)
    if lead is None:
        return None
    body = question[lead.end() :].strip().rstrip("?. ").strip()
    if ":" in body:  # "which of the following pathways contain PKM: glycolysis, apoptosis"
        predicate, _, listed = body.partition(":")
    else:
        start = _PREDICATE.search(body)
        if start is None or start.start() == 0:
            return None
        listed, predicate = body[: start.start()], body[start.start() :]
    options = [o.strip(_QUOTES) for o in _SPLIT.split(listed.strip())]
    options = [o for o in options if o]
    predicate = predicate.strip()
    if len(options) < 2 or not predicate or not _PREDICATE.match(predicate):
        return None
    return Choice(options=list(dict.fromkeys(options)), predicate=predicate)
