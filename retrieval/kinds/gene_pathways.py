"""`gene_pathways`: the pathways holding every gene named — `G member_of ?` — smallest first (the most specific
to the genes), optionally only one database's, listed or counted."""

from __future__ import annotations

import re

from retrieval.kinds.base import QuestionKind, Referents, Statement, Stores
from retrieval.kinds.pathway_lists import grade_pathways, pathways_holding, pathways_table
from retrieval.model.answer import DataTable
from retrieval.model.answer_data import GenePathwaysData
from retrieval.model.plan import Plan
from retrieval.question.reading import GENE_PATHWAYS, OVERVIEW, PATHWAY_WORD, Read, gene_entities, single_source
from retrieval.retrievers.graph_facts import gene_ref


def recognise(read: Read) -> Plan | None:
    asked = GENE_PATHWAYS.search(read.question) or read.count or PATHWAY_WORD.search(read.question)
    if not read.named_genes or read.found or not asked:
        return None
    if OVERVIEW.search(read.question) and not re.search(r"\bpathways\b|\b(which|what) pathway", read.question, re.I):
        return None  # "Tell me about the KEGG p53 … pathway": a pathway's name, not the gene's pathways
    symbols = ", ".join(g.symbol for g in read.named_genes)
    return Plan(
        kind="gene_pathways",
        operation="count" if read.count else "list",
        relation="member_of",
        subjects=gene_entities(read.named_genes),
        returns="pathway",
        source=single_source(read.question),
        reason=f"pathways holding {symbols}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "member_of"
        and plan.returns == "pathway"
        and bool(plan.subjects)
        and all(e.type == "gene" for e in plan.subjects)
    )


def facts(plan: Plan, stores: Stores) -> GenePathwaysData:
    pathways = stores.graph.pathways_with_genes([g.id for g in plan.subjects], plan.source)
    return GenePathwaysData(
        genes=[gene_ref(g) for g in plan.subjects],
        pathways=pathways,
        total=len(pathways),
        source=plan.source,
        count=plan.count,
    )


def statements(data: GenePathwaysData) -> list[Statement]:
    symbols = " and ".join(g.symbol for g in data.genes)
    both = "both " if len(data.genes) == 2 else "all of " if len(data.genes) > 2 else ""
    return pathways_holding(f"{both}{symbols}", [g.id for g in data.genes], data.pathways, data.source, data.count)


def data_table(data: GenePathwaysData) -> DataTable:
    return pathways_table(f"Pathways ({len(data.pathways)} of {data.total})", data.pathways)


def refers_to(data: GenePathwaysData) -> Referents:
    return Referents(genes=[g.symbol for g in data.genes])


KIND = QuestionKind(
    name="gene_pathways",
    recognisers=((120, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade_pathways,
)
