"""What the reaction tables hold, read once for the question-kind evaluation straight from Postgres (`reactions`,
`reaction_participants`, `reaction_steps`, genes placed through `gene_identifiers`), so answers read from the graph
are graded against the tables they were projected from."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.retrievers.reaction_facts import HUB_REACTIONS, HUBS

REACTIONS = """
SELECT r.reaction_id, r.name, r.pathway_id FROM reactions r
JOIN pathways p ON p.pathway_id = r.pathway_id AND p.status = 'active' ORDER BY r.reaction_id
"""
# Each participant as the graph names it: a gene by its HGNC id (unplaced genes have no node), the rest by their id;
# a complex's or set's placed genes and compounds as its parts.
PARTICIPANTS = """
WITH acc AS (SELECT unnest(uniprot_ids) AS accession, hgnc_id FROM gene_identifiers WHERE status = 'Approved')
SELECT rp.reaction_id, rp.role, rp.entity_kind,
       CASE WHEN rp.entity_kind = 'gene' THEN acc.hgnc_id ELSE rp.entity_id END AS entity_id, rp.name,
       coalesce((SELECT array_agg(DISTINCT coalesce(a2.hgnc_id, part)) FROM unnest(rp.components) AS part
                 LEFT JOIN acc a2 ON a2.accession = part WHERE a2.hgnc_id IS NOT NULL OR part LIKE 'CHEBI:%'),
                '{}') AS parts
FROM reaction_participants rp LEFT JOIN acc ON rp.entity_kind = 'gene' AND acc.accession = rp.entity_id
"""
STEPS = "SELECT preceding_id, following_id FROM reaction_steps ORDER BY preceding_id, following_id"


@dataclass
class ReactionTruth:
    names: dict[str, str] = field(default_factory=dict)  # reaction id → name
    pathway_of: dict[str, str] = field(default_factory=dict)
    # reaction → role → entity ids (as the graph keys them)
    roles: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    # entity (gene HGNC id or compound) → {(reaction, role)}, directly or as a part of a complex or set
    involved: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    compound_names: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    steps: set[tuple[str, str]] = field(default_factory=set)

    def named_compounds(self) -> dict[str, str]:
        """Compounds a question can name by their one name (a name no other compound has) → that name."""
        owners: dict[str, set[str]] = defaultdict(set)
        for compound, names in self.compound_names.items():
            for name in names:
                owners[name.lower()].add(compound)
        return {
            c: next(iter(names))
            for c, names in self.compound_names.items()
            if len(names) == 1 and len(owners[next(iter(names)).lower()]) == 1
        }

    def of_pathways(self, pathway_ids: set[str]) -> set[str]:
        return {r for r, p in self.pathway_of.items() if p in pathway_ids}

    def is_hub(self, entity_id: str) -> bool:
        direct = {r for r, roles in self.roles.items() for role in ("input", "output") if entity_id in roles[role]}
        return entity_id in HUBS or len(direct) > HUB_REACTIONS

    def next_reactions(self, reaction_id: str, downstream: bool) -> set[str]:
        """The reactions one walk step away: PRECEDES, or an output consumed (downstream) / an input produced
        (upstream) through an entity that is not a hub."""
        if downstream:
            by_step = {b for a, b in self.steps if a == reaction_id}
            mine, theirs = "output", "input"
        else:
            by_step = {a for a, b in self.steps if b == reaction_id}
            mine, theirs = "input", "output"
        shared = {
            r
            for e in self.roles[reaction_id][mine]
            if not self.is_hub(e)
            for r, roles in self.roles.items()
            if e in roles[theirs] and r != reaction_id
        }
        return by_step | shared


def load_reaction_truth(engine: Engine) -> ReactionTruth:
    truth = ReactionTruth()
    with engine.connect() as conn:
        for r in conn.execute(text(REACTIONS)):
            truth.names[r.reaction_id], truth.pathway_of[r.reaction_id] = r.name, r.pathway_id
        for p in conn.execute(text(PARTICIPANTS)):
            if p.reaction_id not in truth.names or p.entity_id is None:
                continue
            truth.roles[p.reaction_id][p.role].add(p.entity_id)
            truth.involved[p.entity_id].add((p.reaction_id, p.role))
            for part in p.parts:
                truth.involved[part].add((p.reaction_id, p.role))
            if p.entity_kind == "compound" and p.name:
                truth.compound_names[p.entity_id].add(p.name)
        truth.steps = {
            (s.preceding_id, s.following_id)
            for s in conn.execute(text(STEPS))
            if s.preceding_id in truth.names and s.following_id in truth.names
        }
    return truth
