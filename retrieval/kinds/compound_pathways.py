"""`compound_pathways`: the pathways holding every compound named by id (KEGG C-numbers, CHEBI:n) —
`C member_of ?` — smallest first, listed or counted. A compound no pathway holds is one the index lacks."""

from __future__ import annotations

import re

from retrieval.kinds.base import QuestionKind, Referents, Statement, Stores
from retrieval.kinds.pathway_lists import grade_pathways, pathways_holding, pathways_table
from retrieval.model.answer import DataTable
from retrieval.model.answer_data import CompoundPathwaysData, NotFoundData
from retrieval.model.plan import Entity, Plan
from retrieval.question.reading import Read, single_source

COMPOUND_ID = re.compile(r"(?<![\w:])(C\d{5})(?!\w)|\bCHEBI[:\s]\s?(\d+)\b", re.I)


def compound_entities(question: str) -> list[Entity]:
    ids = [f"CHEBI:{chebi}" if chebi else kegg.upper() for kegg, chebi in COMPOUND_ID.findall(question)]
    return [
        Entity(type="compound", id=i, name=i, source="chebi" if i.startswith("CHEBI:") else "kegg")
        for i in dict.fromkeys(ids)
    ]


def recognise(read: Read) -> Plan | None:
    compounds = compound_entities(read.question)
    if not compounds:
        return None
    return Plan(
        kind="compound_pathways",
        operation="count" if read.count else "list",
        relation="member_of",
        subjects=compounds,
        returns="pathway",
        source=single_source(read.question),
        reason=f"pathways holding {', '.join(c.id for c in compounds)}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation in ("list", "count")
        and plan.relation == "member_of"
        and plan.returns == "pathway"
        and bool(plan.subjects)
        and all(e.type == "compound" for e in plan.subjects)
    )


def facts(plan: Plan, stores: Stores) -> CompoundPathwaysData | NotFoundData:
    ids = [c.id for c in plan.subjects]
    pathways = stores.graph.pathways_with_compounds(ids)
    if not pathways and len(ids) == 1:
        # Compound nodes exist only as some pathway's member: none holding it means the index lacks it.
        return NotFoundData(asked=ids[0], what="compound", needed_for="compound_pathways")
    pathways = [p for p in pathways if not plan.source or p.source == plan.source]
    return CompoundPathwaysData(
        compounds=ids, pathways=pathways, total=len(pathways), source=plan.source, count=plan.count
    )


def statements(data: CompoundPathwaysData) -> list[Statement]:
    if not data.pathways:  # nothing to cite: the statement stands on its own (the pipeline keeps it uncited)
        where = {"kegg": "KEGG", "reactome": "Reactome"}.get(data.source, "the graph")
        return [(f"No pathway in {where} contains {' and '.join(data.compounds)}.", [])]
    return pathways_holding(
        " and ".join(data.compounds), [p.id for p in data.pathways[:5]], data.pathways, data.source, data.count
    )


def data_table(data: CompoundPathwaysData) -> DataTable:
    return pathways_table(f"Pathways holding {', '.join(data.compounds)} ({data.total})", data.pathways)


def refers_to(data: CompoundPathwaysData) -> Referents:
    return Referents(pathways=[p.id for p in data.pathways[:2]])


KIND = QuestionKind(
    name="compound_pathways",
    recognisers=((50, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade_pathways,
)
