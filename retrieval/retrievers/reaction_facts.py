"""Graph reads for the reaction kinds: a pathway's reactions and their order, what a reaction consumes, produces and
is catalysed or regulated by, the reactions a gene or compound takes part in, and one step of a walk along
outputs → inputs and PRECEDES — read-only, through `GraphReader.rows` (READ routing, a per-query timeout).

A gene or compound takes part in a reaction directly or as a component of a complex or set the reaction names.
"""

from __future__ import annotations

from typing import Any

from retrieval.model.reaction_data import Involvement, Participant, ReactionRef, WalkStep
from retrieval.model.refs import NodeRef
from retrieval.retrievers.graph_facts import GraphReader

ROLE_OF = {
    "HAS_INPUT": "input",
    "HAS_OUTPUT": "output",
    "CATALYSED_BY": "catalyst",
    "ACTIVATED_BY": "positive_regulator",
    "INHIBITED_BY": "negative_regulator",
}
_ROLE_TYPES = "|".join(ROLE_OF)
# Entities so common that a walk through them reaches everything: currency metabolites and ubiquitin.
HUBS = frozenset(
    {
        "CHEBI:15377",
        "CHEBI:30616",
        "CHEBI:456216",
        "CHEBI:43474",
        "CHEBI:33019",
        "CHEBI:15378",
        "CHEBI:57540",
        "CHEBI:57945",
        "CHEBI:58349",
        "CHEBI:57783",
        "CHEBI:16526",
        "CHEBI:15379",
        "CHEBI:57287",
        "CHEBI:456215",
        "CHEBI:29108",
        "CHEBI:18420",
        "CHEBI:29101",
        "CHEBI:29103",
        "CHEBI:17996",
        "HGNC:12463",
        "HGNC:12468",
        "HGNC:12458",
        "HGNC:10417",  # ubiquitin: UBB, UBC, UBA52, RPS27A
    }
)
HUB_REACTIONS = 12  # an entity that goes into or comes out of more reactions than this is a hub too

PATHWAY_REACTIONS = """
MATCH (p:Pathway {id: $id})<-[:SUBPATHWAY_OF*0..32]-(s:Pathway)-[:HAS_REACTION]->(r:Reaction)
WITH DISTINCT r, s
RETURN r.id AS id, r.name AS name, s.id AS pathway ORDER BY r.id
"""
STEPS_AMONG = """
MATCH (a:Reaction)-[:PRECEDES]->(b:Reaction) WHERE a.id IN $ids AND b.id IN $ids
RETURN a.id AS source, b.id AS target
"""
HELD_PATHWAYS = """
MATCH (p:Pathway)-[:HAS_REACTION]->(r:Reaction)
RETURN p.id AS id, p.name AS name, p.source AS source, count(r) AS size ORDER BY p.id
"""
REACTION = """
MATCH (r:Reaction {id: $id}) OPTIONAL MATCH (p:Pathway)-[:HAS_REACTION]->(r)
RETURN r.id AS id, r.name AS name, p.id AS pathway LIMIT 1
"""
PARTICIPANTS = f"""
MATCH (r:Reaction {{id: $id}})-[e:{_ROLE_TYPES}]->(x)
OPTIONAL MATCH (x)-[:HAS_COMPONENT]->(part)
WITH e, x, part ORDER BY coalesce(part.symbol, part.name, part.id)
RETURN type(e) AS rel, x.id AS id, coalesce(x.symbol, x.name, x.id) AS name, labels(x)[0] AS label, x.kind AS kind,
       [p IN collect(part) | coalesce(p.symbol, p.name, p.id)] AS parts
ORDER BY rel, name
"""
NEIGHBOURS = """
MATCH (r:Reaction {id: $id})
CALL (r) { OPTIONAL MATCH (b:Reaction)-[:PRECEDES]->(r) RETURN collect(b {.id, .name}) AS before }
CALL (r) { OPTIONAL MATCH (r)-[:PRECEDES]->(a:Reaction) RETURN collect(a {.id, .name}) AS after }
RETURN before, after
"""
# Direct roles, and roles through a complex or set that has the entity as a component.
INVOLVEMENTS = f"""
MATCH (x {{id: $id}}) WHERE x:Gene OR x:Compound
CALL (x) {{
  MATCH (r:Reaction)-[e:{_ROLE_TYPES}]->(x) RETURN r, e, null AS via
  UNION
  MATCH (r:Reaction)-[e:{_ROLE_TYPES}]->(c:Complex)-[:HAS_COMPONENT]->(x) RETURN r, e, c AS via
}}
OPTIONAL MATCH (p:Pathway)-[:HAS_REACTION]->(r)
RETURN DISTINCT r.id AS id, r.name AS name, p.id AS pathway, type(e) AS rel, via.id AS via_id, via.name AS via_name
ORDER BY id, rel
"""
# `reactions`: the reactions it is a direct input or output of (what makes it a hub).
ENTITY = """
MATCH (x {id: $id}) WHERE x:Gene OR x:Compound OR x:Complex
OPTIONAL MATCH (q:Reaction)-[:HAS_INPUT|HAS_OUTPUT]->(x)
RETURN x.id AS id, coalesce(x.symbol, x.name, x.id) AS name, count(DISTINCT q) AS reactions
"""
# One step of a walk from a frontier of reactions: the reactions their outputs feed (downstream) or whose outputs
# they consume (upstream), and their PRECEDES neighbours; `hub` marks a step through an entity the walk skips.
_FORWARD = """
UNWIND $ids AS rid MATCH (r:Reaction {id: rid})
CALL (r) {
  MATCH (r)-[:PRECEDES]->(n:Reaction) RETURN n, null AS x
  UNION
  MATCH (r)-[:HAS_OUTPUT]->(x)<-[:HAS_INPUT]-(n:Reaction) WHERE n <> r RETURN n, x
}
"""
_BACKWARD = """
UNWIND $ids AS rid MATCH (r:Reaction {id: rid})
CALL (r) {
  MATCH (n:Reaction)-[:PRECEDES]->(r) RETURN n, null AS x
  UNION
  MATCH (r)-[:HAS_INPUT]->(x)<-[:HAS_OUTPUT]-(n:Reaction) WHERE n <> r RETURN n, x
}
"""
_STEP_RETURN = """
CALL (x) { OPTIONAL MATCH (q:Reaction)-[:HAS_INPUT|HAS_OUTPUT]->(x) RETURN count(DISTINCT q) AS uses }
RETURN r.id AS source, r.name AS source_name, n.id AS id, n.name AS name, x.id AS through,
       coalesce(x.symbol, x.name, x.id) AS through_name,
       x IS NOT NULL AND (x.id IN $hubs OR uses > $hub_reactions) AS hub
ORDER BY source, id
"""
STEP = {"downstream": _FORWARD + _STEP_RETURN, "upstream": _BACKWARD + _STEP_RETURN}


def reaction_ref(row: dict[str, Any]) -> ReactionRef:
    return ReactionRef(id=row["id"], name=row.get("name") or "", pathway=row.get("pathway") or "")


class ReactionReader:
    def __init__(self, graph: GraphReader) -> None:
        self.graph = graph

    def pathway_reactions(self, pathway_id: str) -> tuple[list[ReactionRef], list[tuple[str, str]]]:
        """The reactions of a pathway and of its sub-pathways at any depth, and the PRECEDES edges among them."""
        reactions = [reaction_ref(r) for r in self.graph.rows(PATHWAY_REACTIONS, id=pathway_id)]
        reactions = list({r.id: r for r in reactions}.values())
        steps = [(s["source"], s["target"]) for s in self.graph.rows(STEPS_AMONG, ids=[r.id for r in reactions])]
        return reactions, steps

    def held_pathways(self) -> list[NodeRef]:
        """The pathways that hold reactions directly, with how many."""
        return [
            NodeRef(id=r["id"], name=r["name"] or "", source=r["source"] or "", size=r["size"])
            for r in self.graph.rows(HELD_PATHWAYS)
        ]

    def reaction(self, reaction_id: str) -> ReactionRef | None:
        rows = self.graph.rows(REACTION, id=reaction_id)
        return reaction_ref(rows[0]) if rows else None

    def participants(self, reaction_id: str) -> list[Participant]:
        out = []
        for row in self.graph.rows(PARTICIPANTS, id=reaction_id):
            entity = {"Gene": "gene", "Compound": "compound"}.get(row["label"], row["kind"] or "complex")
            out.append(
                Participant(
                    id=row["id"],
                    name=row["name"] or row["id"],
                    entity=entity,
                    role=ROLE_OF[row["rel"]],
                    parts=list(row["parts"]),
                )
            )
        return out

    def neighbours(self, reaction_id: str) -> tuple[list[ReactionRef], list[ReactionRef]]:
        """The reactions right before and right after (PRECEDES)."""
        rows = self.graph.rows(NEIGHBOURS, id=reaction_id)
        if not rows:
            return [], []
        return (
            [reaction_ref(b) for b in sorted(rows[0]["before"], key=lambda b: b["id"])],
            [reaction_ref(a) for a in sorted(rows[0]["after"], key=lambda a: a["id"])],
        )

    def entity(self, entity_id: str) -> tuple[NodeRef, int] | None:
        """A gene, compound or complex by id, with the number of reactions that name it directly."""
        rows = self.graph.rows(ENTITY, id=entity_id)
        return (NodeRef(id=rows[0]["id"], name=rows[0]["name"] or ""), rows[0]["reactions"]) if rows else None

    def involvements(self, entity_id: str) -> list[Involvement]:
        return [
            Involvement(
                reaction=reaction_ref(r),
                role=ROLE_OF[r["rel"]],  # type: ignore[arg-type]
                via=NodeRef(id=r["via_id"], name=r["via_name"] or "") if r["via_id"] else None,
            )
            for r in self.graph.rows(INVOLVEMENTS, id=entity_id)
        ]

    def step(self, frontier: list[str], direction: str, depth: int) -> tuple[list[WalkStep], list[NodeRef]]:
        """The next reactions from a frontier, and the hubs the step did not pass through."""
        steps, hubs = [], []
        for row in self.graph.rows(STEP[direction], ids=frontier, hubs=sorted(HUBS), hub_reactions=HUB_REACTIONS):
            through = NodeRef(id=row["through"], name=row["through_name"] or "") if row["through"] else None
            if row["hub"] and through is not None:
                hubs.append(through)
                continue
            steps.append(
                WalkStep(
                    source=ReactionRef(id=row["source"], name=row["source_name"] or ""),
                    target=reaction_ref(row),
                    through=through,
                    depth=depth,
                )
            )
        return steps, hubs
