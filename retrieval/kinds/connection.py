"""`connection`: what connects two things — two pathways, a gene and a pathway, or two genes — `A connected_to B`.

Ranked, each cited: the direct relation (membership; one pathway inside the other; a resolved Reactome ↔ KEGG
equivalence or part-of), the genes two pathways share or the pathways two genes share, the nearest pathways both
sit under, then the shortest graph paths (read-only, at most `MAX_PATH_STEPS` relationships and `PATH_LIMIT` paths,
each query under the graph's time limit). Nothing within reach: "no connection within N steps". A search that runs
out of time answers with what was found and says it was too broad.
"""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import listing, node_name, relation_sentence, short_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.kinds.not_found import not_found_plan, unresolved
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import ConnectionData, GraphPath, NodeRef
from retrieval.model.pathways import PathwayRef
from retrieval.model.plan import MAX_PATH_STEPS, Entity, Plan
from retrieval.model.spelling import canonical, canonical_words
from retrieval.model.terms import content_words
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import Read, gene_entity, pathway_entities
from retrieval.retrievers.graph_facts import GraphQueryTimeout, node

PATH_LIMIT = 5
LISTED = 25
_ASKS = re.compile(
    r"\b(connect\w*|links?|linked|linking|relat\w+|relationship|in common|tie[sd]?|bridge[sd]?|"
    r"path(?:s)? (?:from|between)|how (?:do|does|are|is) .+ (?:interact|relate|connect))\b",
    re.I,
)
# Words a connection question is made of besides the two names: anything else asks something the graph does not
# hold ("What evidence links KRAS mutations to resistance to EGFR inhibitors?" is a literature question).
_SCAFFOLD = frozenset(
    {
        "connect",
        "connects",
        "connected",
        "connecting",
        "connection",
        "connections",
        "link",
        "links",
        "linked",
        "linking",
        "relate",
        "relates",
        "related",
        "relating",
        "relation",
        "relationship",
        "relationships",
        "common",
        "tie",
        "ties",
        "tied",
        "bridge",
        "bridges",
        "path",
        "paths",
        "interact",
        "interacts",
        "pathway",
        "pathways",
        "kegg",
        "reactome",
        "human",
        "database",
        "graph",
        "directly",
        "indirectly",
        "exactly",
    }
)
# "What connects A and B", "the link between A and B": two things named, one of them not held.
_TWO_SIDED = re.compile(
    r"\b(?:connects?|links?|ties?|bridges?|between|relate[sd]?|relationship)\b.+"
    r"\b(?:and|to|with)\b",
    re.I,
)
_LISTS = re.compile(r"\b(genes?|members?|proteins?|compounds?|metabolites?)\b", re.I)
# A path's endpoints resolved by id whatever their label, through each label's unique index.
_ENDPOINT = (
    "CALL () {{ MATCH (n:Pathway {{id: ${p}}}) RETURN n UNION MATCH (n:Gene {{id: ${p}}}) RETURN n "
    "UNION MATCH (n:Compound {{id: ${p}}}) RETURN n }}"
)
PATHS = f"""
{_ENDPOINT.format(p="a")}
WITH n AS a
{_ENDPOINT.format(p="b")}
WITH a, n AS b
MATCH path = allShortestPaths((a)-[:HAS_MEMBER|SUBPATHWAY_OF|EQUIVALENT_TO|PART_OF*..{int(MAX_PATH_STEPS)}]-(b))
WITH path LIMIT $limit
RETURN [x IN nodes(path) | x {{.id, name: coalesce(x.symbol, x.name, x.id), .source}}] AS nodes,
       [r IN relationships(path) | [type(r), startNode(r).id]] AS rels
"""


def _asks_more(read: Read, found: list[PathwayRef]) -> bool:
    """Content words beyond the names and the words a connection question is made of."""
    named = {w for name in [*(p.name for p in found), *(m.token for m in read.mentions)] for w in canonical_words(name)}
    return len([w for w in content_words(read.rest(found)) if w not in _SCAFFOLD and canonical(w) not in named]) > 1


def recognise(read: Read) -> Plan | None:
    if not _ASKS.search(read.question):
        return None
    genes = [gene_entity(g) for g in read.genes_outside(read.fuzzy(2))]
    found = (read.found or read.fuzzy(1)) if genes else (read.found if len(read.found) >= 2 else read.fuzzy(2))
    if _LISTS.search(read.rest(found)):  # "Which genes link …" asks for a list ("Gene expression" is a name)
        return None
    if len(found) + len(genes) > 2 or (len(found) + len(genes) == 2 and _asks_more(read, found)):
        return None  # three things, or more asked than how two connect: the literature's question
    if len(found) >= 2 and not genes:
        ends = pathway_entities(found[:2])
    elif genes and found:
        ends = [genes[0], *pathway_entities(found[:1])]
    elif len(genes) >= 2:
        ends = genes[:2]
    elif not _TWO_SIDED.search(read.question):
        return None
    elif unknown := unknown_gene_tokens(read.question, read.genes):
        return not_found_plan(
            read, "gene", "connection", f"no gene {', '.join(unknown)} in the index", asked=", ".join(unknown)
        )
    elif re.search(r"\bpathways?\b|\bsignall?ing\b|\bcascades?\b", read.question, re.I):
        return unresolved(read, "connection", "two pathways or genes", list(found))
    else:
        return None
    return Plan(
        kind="connection",
        operation="path",
        relation="connected_to",
        subjects=ends[:1],
        objects=ends[1:],
        depth=MAX_PATH_STEPS,
        reason=f"what connects {ends[0].id} and {ends[1].id}",
    )


def accepts(plan: Plan) -> bool:
    return plan.operation == "path" and len(plan.subjects) == 1 and len(plan.objects) == 1


def facts(plan: Plan, stores: Stores) -> ConnectionData:
    left, right = plan.subjects[0], plan.objects[0]
    steps = min(plan.depth or MAX_PATH_STEPS, MAX_PATH_STEPS)
    data = ConnectionData(left=node(left), right=node(right), max_steps=steps)
    try:
        _direct(data, left, right, stores)
        paths = stores.graph.rows(PATHS, a=left.id, b=right.id, limit=PATH_LIMIT + 1)
    except GraphQueryTimeout:
        return data.model_copy(update={"too_broad": True})
    found = [_path(row) for row in paths]
    data.paths = [p for p in found if len(p.relations) <= steps][:PATH_LIMIT]
    data.truncated = data.truncated or len(found) > PATH_LIMIT
    return data


def _direct(data: ConnectionData, left: Entity, right: Entity, stores: Stores) -> None:
    """What links the two directly: shared members or pathways, the hierarchy, the resolution."""
    if left.type == "pathway" and right.type == "pathway":
        members = stores.graph.genes_of([left.id, right.id])
        in_right = {g.id for g in members.get(right.id, [])}
        data.shared_genes = [g for g in members.get(left.id, []) if g.id in in_right]
        if mapping := stores.graph.between(left.id, right.id):
            data.mappings = [mapping]
        if left.source == right.source:
            data.common_ancestors = _nearest_common(stores, left.id, right.id)
    elif left.type == "gene" and right.type == "gene":
        data.shared_pathways = stores.graph.pathways_with_genes([left.id, right.id])
    else:
        gene, pathway = (left, right) if left.type == "gene" else (right, left)
        holding = stores.graph.pathways_with_genes([gene.id])
        below = stores.graph.descendants(pathway.id)
        data.shared_pathways = [p for p in holding if p.id == pathway.id or p.id in below]


def _nearest_common(stores: Stores, a: str, b: str) -> list[NodeRef]:
    """The common ancestors (a pathway counts as its own) with the fewest steps from both, each given as the
    lineage from `a` up to it."""
    up_a = {a: [], **stores.graph.ancestors(a)}
    up_b = {b: [], **stores.graph.ancestors(b)}
    common = set(up_a) & set(up_b)
    if not common:
        return []
    distance = {c: len(up_a[c]) + len(up_b[c]) for c in common}
    best = min(distance.values())
    tops = sorted(c for c in common if distance[c] == best)
    return [(up_a[c] or up_b[c])[-1] for c in tops if up_a[c] or up_b[c]]


def _path(row: dict) -> GraphPath:
    ids = [n["id"] for n in row["nodes"]]
    relations = []
    for i, (rel_type, start) in enumerate(row["rels"]):
        relations.append(rel_type if start == ids[i] else f"{rel_type}<")
    return GraphPath(
        nodes=[NodeRef(id=n["id"], name=n.get("name") or "", source=n.get("source") or "") for n in row["nodes"]],
        relations=relations,
    )


# --- the answer ---------------------------------------------------------------------------------------------------
def _render(path: GraphPath) -> str:
    parts = [short_name(path.nodes[0])]
    for rel, nxt in zip(path.relations, path.nodes[1:], strict=True):
        arrow = f"<-[{rel[:-1]}]-" if rel.endswith("<") else f"-[{rel}]->"
        parts.append(f"{arrow} {short_name(nxt)}")
    return " ".join(parts)


def _told(path: GraphPath, data: ConnectionData) -> bool:
    """A path the statements above already tell: through one shared gene or pathway, or along the resolution
    edge or hierarchy edge already stated."""
    shared = {g.id for g in data.shared_genes} | {p.id for p in data.shared_pathways}
    if len(path.nodes) == 3 and path.nodes[1].id in shared:
        return True
    return len(path.nodes) == 2 and bool(data.mappings or data.common_ancestors or data.shared_pathways)


def _containment(data: ConnectionData) -> list[Statement]:
    a, b = data.left, data.right
    out = []
    for top in data.common_ancestors:
        if top.id in (a.id, b.id):
            inner, outer = (b, a) if top.id == a.id else (a, b)
            out.append((f"{node_name(inner)} is part of {node_name(outer)} in the hierarchy.", [a.id, b.id]))
    if (a.source == "hgnc") != (b.source == "hgnc"):
        gene, pathway = (a, b) if a.source == "hgnc" else (b, a)
        member = any(p.id == pathway.id for p in data.shared_pathways)
        out.append((f"{gene.name} is {'' if member else 'not '}a member of {node_name(pathway)}.", [pathway.id]))
    return out


def statements(data: ConnectionData) -> list[Statement]:
    a, b = data.left, data.right
    out: list[Statement] = []
    for mapping in data.mappings:
        out.append((relation_sentence(a, mapping.model_copy(update={"shared_genes": []})), [a.id, b.id]))
    out += _containment(data)
    if data.shared_genes:
        symbols = [g.symbol for g in data.shared_genes]
        out.append(
            (
                f"{node_name(a)} and {node_name(b)} share {len(symbols)} member genes: {listing(symbols, LISTED)}.",
                [a.id, b.id],
            )
        )
    genes = [n for n in (a, b) if n.source == "hgnc"]
    if data.shared_pathways and len(genes) == 2:
        names = [f'{p.id} "{p.name}"' for p in data.shared_pathways]
        out.append(
            (
                f"{len(names)} pathways hold both {a.name} and {b.name} (smallest first): {listing(names, LISTED)}.",
                [p.id for p in data.shared_pathways[:5]],
            )
        )
    for top in data.common_ancestors:
        if top.id not in (a.id, b.id):
            out.append(
                (
                    f"Both sit under {node_name(top)}, the nearest pathway above them both.",
                    list(dict.fromkeys([a.id, b.id, top.id])),
                )
            )
    for path in data.paths:
        if not _told(path, data):
            steps = len(path.relations)
            out.append(
                (
                    f"A path of {steps} step{'s' if steps > 1 else ''}: {_render(path)}.",
                    [n.id for n in path.nodes if n.source in ("reactome", "kegg", "hgnc")],
                )
            )
    if data.too_broad:
        out.append(
            (
                f"The path search between {node_name(a)} and {node_name(b)} was too broad to finish in time; "
                "the connections above are what was found before it stopped.",
                [a.id, b.id],
            )
        )
    elif not out:
        out.append(
            (
                f"No connection between {node_name(a)} and {node_name(b)} within {data.max_steps} steps of "
                "the graph (membership, hierarchy or the Reactome ↔ KEGG resolution).",
                [a.id, b.id],
            )
        )
    return out


def data_table(data: ConnectionData) -> DataTable:
    rows = [["relation", m.pathway.id, f"{m.relation} {m.direction}".strip()] for m in data.mappings]
    rows += [["shared gene", g.id, g.symbol] for g in data.shared_genes]
    rows += [["shared pathway", p.id, p.name] for p in data.shared_pathways]
    rows += [["common ancestor", p.id, p.name] for p in data.common_ancestors]
    rows += [["path", str(len(p.relations)), _render(p)] for p in data.paths]
    return table(
        f"What connects {data.left.name or data.left.id} and {data.right.name or data.right.id}",
        ["connection", "id / steps", "what"],
        rows,
    )


def refers_to(data: ConnectionData) -> Referents:
    ends = [data.left, data.right]
    return Referents(
        pathways=[n.id for n in ends if n.source in ("reactome", "kegg")],
        genes=[n.name for n in ends if n.source == "hgnc"],
    )


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The two things asked about, and what connects them: the shared genes (two pathways) or pathways (two
    genes) the index holds, all named."""
    data = answer.data
    if not isinstance(data, ConnectionData) or {data.left.id, data.right.id} != set(expected["between"].split("|")):
        return False
    shared = {g.symbol for g in data.shared_genes} | {p.id for p in data.shared_pathways}
    return shared == {s for s in expected.get("shared", "").split("|") if s}


KIND = QuestionKind(
    name="connection",
    recognisers=((38, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
