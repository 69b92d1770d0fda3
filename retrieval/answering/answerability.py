"""Does the text evidence answer the question — its entities and the relation it asks about — or only share its
topic? A literature answer is given only when it does; otherwise "Flux does not hold that".

Two parts:
- a rule: a gene, pathway or identifier the question names that no retrieved text mentions (by symbol, alias, name
  or id) means the evidence is about its neighbours, never an answer about it;
- a logistic model over signals of the final evidence (`SIGNALS`), fitted per embedding model on a labelled dev
  set of answerable and unanswerable questions (dagster_project/evals/answerability_fit.py, `flux evals
  fit-answerability`) and stored in answerability.json. Its probability, calibrated on the same set under
  cross-validation, is the literature answer's confidence; below `threshold` the question is not answered.

A model without a fitted entry answers whatever the rule lets through, with the generator's own confidence.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from retrieval.answering.offline import sentences
from retrieval.model.drugs import drug_lexicon
from retrieval.model.plan import Plan
from retrieval.model.terms import entities, key_terms, stem, without_possessive, words
from retrieval.model.types import Evidence

MODEL_PATH = Path(__file__).with_name("answerability.json")
TOP_CHUNKS = 5
SIGNALS = (
    "entity_coverage",
    "entities_together",
    "best_sentence_terms",
    "best_sentence_relation",
    "top_chunks_terms",
    "best_cosine",
    "asks_yes_no",
)
_YES_NO = re.compile(r"^\s*(is|are|does|do|did|can|could|was|were|has|have|true or false)\b", re.I)
_ID_LIKE = re.compile(r"^[A-Z0-9][A-Z0-9-]*$|^(?:rs|p\.|c\.)\d+\w*$")
_NOT_NAMES = frozenset(
    {
        "KEGG",
        "Reactome",
        "PubMed",
        "OpenAlex",
        "HGNC",
        "UniProt",
        "Entrez",
        "Ensembl",
        "True",
        "False",
        "DNA",
        "RNA",
        "I",
    }
)


@dataclass(frozen=True)
class Named:
    """A thing the question names, with every form a text may use for it."""

    label: str
    forms: tuple[str, ...]
    identifier: bool  # an id or a gene: a text about it must name it


@dataclass(frozen=True)
class Signals:
    values: dict[str, float]
    unmentioned: tuple[str, ...]  # named things no retrieved text mentions

    def vector(self, names: Sequence[str] = SIGNALS) -> list[float]:
        return [self.values[n] for n in names]


def named_things(question: str, plan: Plan | None, aliases: dict[str, tuple[str, ...]] | None = None) -> list[Named]:
    """The genes and pathways the plan names (with aliases and ids), the question's other identifier-like tokens
    (rs1042522, CDKN2A, V600E) and capitalised names, and the drugs it names (model/drugs.py)."""
    aliases = aliases or {}
    named: list[Named] = []
    covered: set[str] = set()
    for entity in plan.entities if plan else []:
        forms = (entity.name, entity.id, entity.asked_as, *aliases.get(entity.id, ()))
        forms = tuple(dict.fromkeys(f for f in forms if f and len(f) > 1))
        named.append(Named(entity.name or entity.id, forms, identifier=True))
        covered |= {f.lower() for f in forms} | {w.lower() for f in forms for w in words(f)}
    # Any drug named, lower case included ("sorafenib"): a text about it names it.
    drugs = {asked.lower(): drug for asked, drug in drug_lexicon().named_in(question)}
    for raw in entities(question):
        token = without_possessive(raw)
        if token in _NOT_NAMES or token.lower() in covered:
            continue
        # Written like an id or a gene symbol (CDKN2A, rs1042522, V600E, PTEN): a text about it names it.
        identifier = (bool(_ID_LIKE.match(token)) and len(token) >= 3) or token.lower() in drugs  # not a phase (G1)
        named.append(Named(token, (token,), identifier))
        covered.add(token.lower())
    for asked, drug in drugs.items():
        if asked not in covered:
            named.append(Named(drug.name, tuple(dict.fromkeys((asked, drug.name))), identifier=True))
    return named


def _mentions(text: str, form: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(form)}(?![\w-])", text, re.IGNORECASE) is not None


def signals(
    question: str, plan: Plan | None, evidence: list[Evidence], aliases: dict[str, tuple[str, ...]] | None = None
) -> Signals:
    chunks = sorted((e for e in evidence if e.kind == "chunk"), key=lambda e: -e.score)[:TOP_CHUNKS]
    text = " ".join(f"{e.title} {e.text}" for e in chunks)
    named = named_things(question, plan, aliases)
    unmentioned = tuple(n.label for n in named if n.identifier and not any(_mentions(text, f) for f in n.forms))
    coverage = 1.0 if not named else sum(any(_mentions(text, f) for f in n.forms) for n in named) / len(named)
    terms = set(key_terms(question))
    entity_stems = {stem(w) for n in named for f in n.forms for w in words(f)}
    relation = terms - entity_stems
    best_terms = best_relation = together = 0.0
    for chunk in chunks:
        for sentence in sentences(f"{chunk.title}. {chunk.text}"):
            have = {stem(w) for w in words(sentence)}
            if terms:
                best_terms = max(best_terms, len(terms & have) / len(terms))
            mentioned = sum(any(_mentions(sentence, f) for f in n.forms) for n in named)
            if named:
                together = max(together, mentioned / len(named))
            if relation and (not named or mentioned):
                best_relation = max(best_relation, len(relation & have) / len(relation))
    top_terms = len(terms & {stem(w) for w in words(text)}) / len(terms) if terms else 1.0
    cosine = max((e.scores.get("cosine", 0.0) for e in chunks), default=0.0)
    values = {
        "entity_coverage": coverage,
        "entities_together": together if named else 1.0,
        "best_sentence_terms": best_terms,
        "best_sentence_relation": best_relation if relation else best_terms,
        "top_chunks_terms": top_terms,
        "best_cosine": cosine,
        "asks_yes_no": float(bool(_YES_NO.search(question))),
    }
    return Signals(values, unmentioned)


@dataclass(frozen=True)
class AnswerabilityModel:
    """Standardised logistic regression: P(the evidence answers the question)."""

    signals: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, observed: Signals) -> float:
        z = self.intercept + sum(
            c * (v - m) / (s or 1.0)
            for c, v, m, s in zip(self.coef, observed.vector(self.signals), self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-z))

    def answers(self, probability: float) -> bool:
        return probability >= self.threshold

    def as_json(self) -> dict[str, object]:
        return {
            "signals": list(self.signals),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "threshold": self.threshold,
        }


@cache
def _stored(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text()) if path.is_file() else {}


def model_for(embedding_model: str, path: Path = MODEL_PATH) -> AnswerabilityModel | None:
    entry = _stored(path).get(embedding_model)
    if not entry:
        return None
    return AnswerabilityModel(
        tuple(entry["signals"]),
        tuple(entry["mean"]),
        tuple(entry["scale"]),
        tuple(entry["coef"]),
        float(entry["intercept"]),
        float(entry["threshold"]),
    )


@dataclass(frozen=True)
class Decision:
    answers: bool
    probability: float | None  # None: no fitted model for this encoder
    why: str
    signals: Signals
    ruled_out: bool = False  # abstained by rule (nothing retrieved, a named thing no text mentions)


def decide(
    question: str,
    plan: Plan | None,
    evidence: list[Evidence],
    model: AnswerabilityModel | None,
    aliases: dict[str, tuple[str, ...]] | None = None,
) -> Decision:
    observed = signals(question, plan, evidence, aliases)
    if not any(e.kind == "chunk" for e in evidence):
        return Decision(False, 0.0, "no text evidence was retrieved", observed, ruled_out=True)
    if observed.unmentioned:
        return Decision(
            False,
            0.0,
            f"no retrieved text mentions {', '.join(observed.unmentioned)}: the texts found are about something else",
            observed,
            ruled_out=True,
        )
    if model is None:
        return Decision(True, None, "no answerability model is fitted for this encoder", observed)
    probability = model.probability(observed)
    if not model.answers(probability):
        return Decision(
            False,
            probability,
            f"the evidence does not state what is asked (answerability {probability:.2f} < {model.threshold:.2f})",
            observed,
        )
    return Decision(True, probability, f"answerability {probability:.2f}", observed)
