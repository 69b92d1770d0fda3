"""`association_absent`: the answer to a yes/no question about a gene and a condition that ClinVar does not link
(read by `association_check`). "Flux holds no association between D and G (ClinVar, release …)" — what Flux does
not hold, with confidence 0, never "false" stated as a fact about biology — and what it does hold about each."""

from __future__ import annotations

from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement
from retrieval.model.answer import FinalAnswer
from retrieval.model.disease_data import AssociationAbsentData


def statements(data: AssociationAbsentData) -> list[Statement]:
    g, c = data.gene, data.condition
    return [
        (
            f"Flux holds no association between {c.name} [{c.id}] and {g.symbol} ({g.id}) (ClinVar, release "
            f"{data.release}); that is not evidence that none exists. ClinVar links {g.symbol} to "
            f"{data.gene_conditions} other conditions and {c.name} to {data.condition_genes} genes.",
            [],
        )
    ]


def refers_to(data: AssociationAbsentData) -> Referents:
    return Referents(genes=[data.gene.symbol])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    return (
        isinstance(data, AssociationAbsentData)
        and answer.confidence < 0.5
        and answer.answer.startswith("Flux holds no association")
        and data.gene.id == expected.get("subject")
        and data.condition.id == expected.get("object")
    )


# Executes no plan of its own (no recogniser, accepts nothing): association_check's facts are this kind's when
# ClinVar holds no link.
KIND = QuestionKind(
    name="association_absent", statements=statements, refers_to=refers_to, grade=grade, needs_graph=False, abstains=True
)
