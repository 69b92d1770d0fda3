"""Grade an answer to a generated kind question (kind_questions.py) against what the index holds.

A pass needs the right kind and the right content in `data`: the pathway asked about, the exact gene / pathway
set, the number stated in the prose equal to the list in `data` and to the index, the HGNC value for gene facts,
and "not found" for what the index does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dagster_project.evals.kind_truth import GeneTruth, Truth
from dagster_project.evals.questions import EvalQuestion
from retrieval.model.answer import FinalAnswer
from retrieval.model.answer_data import (
    ComparisonData,
    CompoundPathwaysData,
    CounterpartData,
    DifferenceData,
    GeneFactsData,
    GenePathwaysData,
    HierarchyData,
    MembersData,
    OverviewData,
    SharedGenesData,
)

Check = Callable[[FinalAnswer, EvalQuestion, Truth], bool]


def _expected(q: EvalQuestion) -> set[str]:
    return {e for e in q.extra.get("expected", "").split("|") if e}


def _states(answer: FinalAnswer, number: int) -> bool:
    return re.search(rf"(?<![\w.]){number}(?![\w.])", answer.answer) is not None


def _count_ok(answer: FinalAnswer, q: EvalQuestion, listed: int) -> bool:
    if "count" not in q.extra:
        return True
    number = int(q.extra["count"])
    return listed == number and _states(answer, number)


def _members(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return (isinstance(data, MembersData) and data.pathway.id in _expected(q)
            and {g.symbol for g in data.genes} == truth.pathways[data.pathway.id].genes
            and _count_ok(answer, q, data.total))


def _overview(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return (isinstance(data, OverviewData) and data.pathway.id in _expected(q)
            and data.gene_total == len(truth.pathways[data.pathway.id].genes))


def _hierarchy(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    if not isinstance(data, HierarchyData):
        return False
    listed = data.parents if q.extra.get("direction") == "up" else data.children
    return {n.id for n in listed} == _expected(q) and _count_ok(answer, q, len(listed))


def _gene_pathways(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return (isinstance(data, GenePathwaysData) and {p.id for p in data.pathways} == _expected(q)
            and _count_ok(answer, q, data.total))


def _compound_pathways(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return (isinstance(data, CompoundPathwaysData) and {p.id for p in data.pathways} == _expected(q)
            and _count_ok(answer, q, data.total))


def _counterpart(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return isinstance(data, CounterpartData) and bool(_expected(q) & {m.pathway.id for m in data.counterparts})


def _shared_genes(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return isinstance(data, SharedGenesData) and {g.symbol for g in data.shared} == _expected(q)


def _difference(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return (isinstance(data, DifferenceData) and (data.left.id, data.right.id) == (q.extra["left"], q.extra["right"])
            and {g.symbol for g in data.genes} == _expected(q))


def _compare(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    return isinstance(data, ComparisonData) and {data.left.id, data.right.id} == _expected(q)


def _gene_facts(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    data = answer.data
    if not isinstance(data, GeneFactsData) or {g.symbol for g in data.genes} != _expected(q):
        return False
    if data.ambiguous:
        return True  # every candidate listed: the graded set above
    row = truth.genes[data.genes[0].symbol]
    return all(value in answer.answer for value in _hgnc_values(q.extra["fact"], row))


def _hgnc_values(fact: str, row: GeneTruth) -> list[str]:
    """What the answer must say, read from the HGNC table itself."""
    if fact == "symbol":
        return [row.symbol]
    if fact == "ids":
        return [v for v in (row.entrez_id, row.ensembl_id, *row.uniprot_ids[:1]) if v]
    if fact == "locus_type":
        coding = row.locus_type == "gene with protein product"
        return [("Yes" if coding else "No") if row.locus_type else "no locus type"]
    if fact == "location":
        return [row.location or "no chromosome location"]
    return [row.name]


GRADERS: dict[str, Check] = {
    "members": _members, "overview": _overview, "hierarchy": _hierarchy, "gene_pathways": _gene_pathways,
    "compound_pathways": _compound_pathways, "counterpart": _counterpart, "shared_genes": _shared_genes,
    "difference": _difference, "compare": _compare, "gene_facts": _gene_facts,
    "not_found": lambda answer, q, truth: answer.kind == "not_found",
}


def grade(answer: FinalAnswer, q: EvalQuestion, truth: Truth) -> bool:
    return answer.kind == q.extra["kind"] and GRADERS[q.extra["kind"]](answer, q, truth)
