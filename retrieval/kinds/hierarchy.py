"""`hierarchy`: where a pathway sits — its parents (`P part_of ?`), its sub-pathways (`? part_of P`) or both
(describe), listed or counted; its top-level category (`P part_of ?` at any depth: the ancestors with no parent,
each with the lineage that reaches it). A yes/no question about the hierarchy is the `check` kind's."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.kinds.not_found import unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import HierarchyData, NodeRef
from retrieval.model.plan import Plan
from retrieval.question.reading import Read, pathway_entity
from retrieval.retrievers.graph_facts import node

CHILDREN = re.compile(
    r"\bsub-?pathways?\b|\bchild(ren)?( pathways?)?\b|\b(is|are|falls?|sits?|comes?|lies?|listed|"
    r"found|nested) (directly )?(under|below|beneath|underneath)\b|\bwhat('s| is)( directly)? "
    r"(under|below|beneath|underneath)\b|\bdescendants?\b|"
    r"\bbroken (down )?into\b|\bbroken down\b|\bsubdivided\b|\bbranches\b",
    re.I,
)
PARENTS = re.compile(
    r"\bparent( pathways?)?\b|\bparents\b|\bpart of which\b|\bwhich (larger|parent|broader|higher)\b|"
    r"\b(part|a part) of (an?|any|some) (larger|bigger|broader|parent|higher|other)\b|"
    r"\bancestors?\b|\bpart of( in (kegg|reactome))?\s*[?.]*\s*$|"
    r"\bbelongs? to\s*\??\s*$|\bcontained in\s*\??\s*$|\bnested (in|under)\s*"
    r"\??\s*$|\bwhere does .+ (sit|fall|belong)\b|\babove\b|\bsuper-?pathways?\b",
    re.I,
)


# The category a pathway is filed under: its top-level ancestor(s), not its direct parent.
TOP_LEVEL = re.compile(
    r"\btop[- ]?level\b|\bcategor(?:y|ies)\b|\broot (?:pathways?|of)\b|\b(?:highest|uppermost)[- ]level\b", re.I
)


def recognise(read: Read) -> Plan | None:
    top = bool(TOP_LEVEL.search(read.question))
    parents = bool(PARENTS.search(read.question))
    down, up = bool(CHILDREN.search(read.question)), parents or top
    if not (down or up) or (read.named_genes and not read.found and not down):
        return None  # "Which pathways does TP53 belong to?" asks for the gene's pathways
    found = read.found or read.fuzzy(1)
    if not found:
        # "What are the top-level pathways?" names no pathway to place: not this kind's question.
        return None if top and not (parents or down) else unresolved(read, "hierarchy", "a pathway")
    pathway = pathway_entity(found[0])
    operation = "count" if read.count else "list"
    if down and not up:
        return Plan(
            kind="hierarchy",
            operation=operation,
            relation="part_of",
            objects=[pathway],
            returns="pathway",
            reason=f"sub-pathways of {pathway.id}",
        )
    if up and not down:
        return Plan(
            kind="hierarchy",
            operation=operation,
            relation="part_of",
            subjects=[pathway],
            returns="pathway",
            depth=None if top else 1,
            reason=f"{'top-level ancestors' if top else 'parents'} of {pathway.id}",
        )
    return Plan(
        kind="hierarchy",
        operation="describe",
        relation="part_of",
        subjects=[pathway],
        reason=f"parents and sub-pathways of {pathway.id}",
    )


def direction(plan: Plan) -> str:
    """up (what it is part of), down (what is part of it) or both."""
    if plan.operation == "describe":
        return "both"
    return "down" if plan.objects and not plan.subjects else "up"


def accepts(plan: Plan) -> bool:
    single = len(plan.entities) == 1 and plan.entities[0].type == "pathway"
    return plan.relation == "part_of" and plan.operation in ("list", "count", "describe") and single


def facts(plan: Plan, stores: Stores) -> HierarchyData:
    pathway = plan.entities[0]
    parents, children = stores.graph.hierarchy(pathway.id)
    data = HierarchyData(
        pathway=node(pathway), parents=parents, children=children, direction=direction(plan), count=plan.count
    )  # type: ignore[arg-type]
    if data.direction == "up" and plan.depth is None:
        lineages = stores.graph.ancestors(pathway.id)
        # An ancestor with no parent of its own is a top-level pathway (a Reactome category).
        tops = sorted(a for a in lineages if a != pathway.id and not stores.graph.hierarchy(a)[0])
        data.top_level = [lineages[a][-1] for a in tops]
        data.lineages = [lineages[a] for a in tops]
    return data


def _names(nodes: list[NodeRef]) -> list[str]:
    return [f'{n.id} "{n.name}"' for n in nodes]


def hierarchy_statements(data: HierarchyData) -> list[Statement]:
    p = data.pathway
    up = (
        f"{node_name(p)} is part of {listing(_names(data.parents), 25)}."
        if data.parents
        else f"{node_name(p)} is a top-level pathway (no parent pathway in the graph)."
    )
    down = (
        f"{node_name(p)} has {len(data.children)} sub-pathways: {listing(_names(data.children), 25)}."
        if data.children
        else f"{node_name(p)} has no sub-pathways in the graph."
    )
    if data.top_level:
        paths = ["; ".join(" → ".join(n.name or n.id for n in lineage) for lineage in data.lineages)]
        up = (
            f"The top-level pathway{'s' if len(data.top_level) > 1 else ''} above {node_name(p)}: "
            f"{listing(_names(data.top_level), 25)} (by {paths[0]})."
        )
    chosen = {"up": [up], "down": [down], "both": [up, down]}[data.direction]
    cited = [p.id, *(t.id for t in data.top_level)]
    return [(text, cited) for text in chosen]


def data_table(data: HierarchyData) -> DataTable:
    if data.top_level:
        return table(
            f"Top level above {data.pathway.name or data.pathway.id}",
            ["top-level pathway", "name", "lineage"],
            [
                [t.id, t.name, " → ".join(n.id for n in lineage)]
                for t, lineage in zip(data.top_level, data.lineages, strict=True)
            ],
            of="pathway",
        )
    rows = [["parent", p.id, p.name, p.source] for p in data.parents if data.direction != "down"]
    rows += [["child", c.id, c.name, c.source] for c in data.children if data.direction != "up"]
    return table(
        f"Hierarchy of {data.pathway.name or data.pathway.id}", ["relation", "id", "name", "source"], rows, of="pathway"
    )


def refers_to(data: HierarchyData) -> Referents:
    return Referents(pathways=[data.pathway.id])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    data = answer.data
    if not isinstance(data, HierarchyData):
        return False
    if expected.get("direction") == "top":
        listed = data.top_level
    else:
        listed = data.parents if expected.get("direction") == "up" else data.children
    return {n.id for n in listed} == expected_set(expected) and count_stated(answer, expected, len(listed))


KIND = QuestionKind(
    name="hierarchy",
    recognisers=((90, recognise),),
    accepts=accepts,
    facts=facts,
    statements=hierarchy_statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
