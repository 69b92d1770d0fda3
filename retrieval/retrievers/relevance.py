"""Does the text evidence fit the question at all? A literature answer whose best evidence is unrelated says that
the index holds nothing relevant instead of quoting it.

Three signals of the final evidence: whether a name the question writes (a gene, a pathway, an id) appears in the
three best chunks, the best dense cosine between the question and a chunk (`scores["cosine"]`, set by the Postgres
retriever whatever the reranker), and the share of the question's key terms found in those chunks. Evidence is
unrelated when no name is shared and both numbers are under the floor. The floor is fitted per embedding model
on questions with and without an answer in the index (`dagster_project/evals/evidence_floor.py`, `flux evals
fit-floor`) and stored in `evidence_floor.json`; a model without a fitted floor abstains from nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from retrieval.model.answer import FinalAnswer
from retrieval.model.terms import entities, key_terms
from retrieval.model.types import Evidence

FLOOR_PATH = Path(__file__).with_name("evidence_floor.json")
TOP_CHUNKS = 3


@dataclass(frozen=True)
class EvidenceFloor:
    cosine_min: float
    overlap_min: float

    def refuses(self, cosine: float, overlap: float, shared_entity: bool) -> bool:
        return not shared_entity and cosine < self.cosine_min and overlap < self.overlap_min

    def unrelated(self, question: str, evidence: list[Evidence], names: Sequence[str] = ()) -> bool:
        return self.refuses(*signals(question, evidence, names))


def signals(question: str, evidence: list[Evidence], names: Sequence[str] = ()) -> tuple[float, float, bool]:
    """(best chunk cosine, share of the question's key terms in the best chunks, whether a name the question writes
    — `names` read by the router (genes, pathways), or an identifier-like word — appears in them); (0, 0, False)
    without chunks."""
    chunks = sorted((e for e in evidence if e.kind == "chunk"), key=lambda e: -e.score)
    if not chunks:
        return 0.0, 0.0, False
    cosine = max(e.scores.get("cosine", 0.0) for e in chunks)
    best = " ".join(e.text for e in chunks[:TOP_CHUNKS])
    terms = set(key_terms(question))
    overlap = len(terms & set(key_terms(best))) / len(terms) if terms else 1.0
    names = [n for n in [*names, *entities(question)] if len(n) > 2]
    shared = any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", best, re.IGNORECASE) for n in names)
    return cosine, overlap, shared


@cache
def _stored(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text()) if path.is_file() else {}


def floor_for(embedding_model: str, path: Path = FLOOR_PATH) -> EvidenceFloor | None:
    entry = _stored(path).get(embedding_model)
    return EvidenceFloor(entry["cosine_min"], entry["overlap_min"]) if entry else None


def nothing_relevant(question: str, evidence: list[Evidence], floor: EvidenceFloor) -> FinalAnswer:
    """The answer when the best evidence is unrelated: says so, quotes and cites nothing."""
    cosine, overlap, _ = signals(question, evidence)
    return FinalAnswer(question=question, confidence=0.0,
                       answer="The index holds nothing relevant to this question: the closest texts share neither "
                              "its terms nor its meaning, so Flux does not quote them as an answer.",
                       warnings=[f"best evidence unrelated: cosine {cosine:.2f} < {floor.cosine_min} and key-term "
                                 f"overlap {overlap:.2f} < {floor.overlap_min} (the fitted evidence floor)"])
