"""What a reaction consumes, produces, is catalysed and regulated by, and which reaction follows it: the graph's rows
(read from Postgres) and statements (MERGE on stable ids). Every reaction of an active pathway has a row, an empty
one when it lost its participants, so stale edges go too.

Reaction -HAS_INPUT / HAS_OUTPUT / CATALYSED_BY / ACTIVATED_BY / INHIBITED_BY-> Gene (HGNC, through UniProt) |
Compound (ChEBI) | Complex (a Reactome complex or set) -HAS_COMPONENT-> Gene | Compound; Reaction -PRECEDES->
Reaction.
"""

from __future__ import annotations

ROLE_TYPES: dict[str, str] = {
    "input": "HAS_INPUT",
    "output": "HAS_OUTPUT",
    "catalyst": "CATALYSED_BY",
    "positive_regulator": "ACTIVATED_BY",
    "negative_regulator": "INHIBITED_BY",
}
TYPES = frozenset({*ROLE_TYPES.values(), "HAS_COMPONENT", "PRECEDES"})

_ACCESSIONS = """acc AS (SELECT unnest(uniprot_ids) AS accession, hgnc_id FROM gene_identifiers
             WHERE status = 'Approved')"""
_HELD = """held AS (SELECT r.reaction_id FROM reactions r
              JOIN pathways p ON p.pathway_id = r.pathway_id AND p.status = 'active')"""

COMPLEXES = f"""
WITH {_ACCESSIONS}, {_HELD},
     c AS (SELECT DISTINCT ON (rp.entity_id) rp.entity_id, rp.name, rp.entity_kind, rp.components
           FROM reaction_participants rp JOIN held USING (reaction_id)
           WHERE rp.entity_kind IN ('complex', 'set') ORDER BY rp.entity_id, rp.reaction_id)
SELECT c.entity_id AS id, c.name, c.entity_kind AS kind,
       coalesce((SELECT array_agg(DISTINCT acc.hgnc_id ORDER BY acc.hgnc_id) FROM unnest(c.components) AS part
                 JOIN acc ON acc.accession = part), '{{}}') AS genes,
       coalesce((SELECT array_agg(DISTINCT part ORDER BY part) FROM unnest(c.components) AS part
                 WHERE part LIKE 'CHEBI:%'), '{{}}') AS compounds
FROM c ORDER BY c.entity_id
"""
MERGE_COMPLEXES = """
UNWIND $rows AS row
MERGE (c:Complex {id: row.id})
SET c.name = row.name, c.kind = row.kind
WITH c, row
OPTIONAL MATCH (c)-[old:HAS_COMPONENT]->(x) WHERE NOT x.id IN row.genes + row.compounds
DELETE old
WITH DISTINCT c, row
CALL (c, row) { UNWIND row.genes AS gene_id MATCH (x:Gene {id: gene_id}) MERGE (c)-[:HAS_COMPONENT]->(x) }
CALL (c, row) { UNWIND row.compounds AS chebi MERGE (x:Compound {id: chebi}) MERGE (c)-[:HAS_COMPONENT]->(x) }
"""


def participants_sql(role: str) -> str:
    """Each held reaction with its `role` participants: HGNC genes, ChEBI compounds and Reactome complexes."""
    return f"""
WITH {_ACCESSIONS}, {_HELD},
     part AS (SELECT rp.reaction_id, rp.entity_kind, rp.entity_id, acc.hgnc_id FROM reaction_participants rp
              LEFT JOIN acc ON rp.entity_kind = 'gene' AND acc.accession = rp.entity_id
              WHERE rp.role = '{role}')
SELECT held.reaction_id AS reaction,
       coalesce(array_agg(DISTINCT part.hgnc_id) FILTER (WHERE part.hgnc_id IS NOT NULL), '{{}}') AS genes,
       coalesce(array_agg(DISTINCT part.entity_id) FILTER (WHERE part.entity_kind = 'compound'), '{{}}')
           AS compounds,
       coalesce(array_agg(DISTINCT part.entity_id) FILTER (WHERE part.entity_kind IN ('complex', 'set')), '{{}}')
           AS complexes
FROM held LEFT JOIN part USING (reaction_id) GROUP BY held.reaction_id ORDER BY held.reaction_id
"""


def sync_participants(rel: str) -> str:
    """Make each reaction's `rel` edges exactly its row's genes, compounds and complexes."""
    return f"""
UNWIND $rows AS row
MATCH (r:Reaction {{id: row.reaction}})
OPTIONAL MATCH (r)-[old:{rel}]->(x) WHERE NOT x.id IN row.genes + row.compounds + row.complexes
DELETE old
WITH DISTINCT r, row
CALL (r, row) {{ UNWIND row.genes AS gene_id MATCH (x:Gene {{id: gene_id}}) MERGE (r)-[:{rel}]->(x) }}
CALL (r, row) {{ UNWIND row.compounds AS chebi MERGE (x:Compound {{id: chebi}}) MERGE (r)-[:{rel}]->(x) }}
CALL (r, row) {{ UNWIND row.complexes AS cid MATCH (x:Complex {{id: cid}}) MERGE (r)-[:{rel}]->(x) }}
"""


STEPS = f"""
WITH {_HELD}
SELECT held.reaction_id AS reaction,
       coalesce(array_agg(s.following_id ORDER BY s.following_id) FILTER (WHERE s.following_id IS NOT NULL),
                '{{}}') AS following
FROM held LEFT JOIN reaction_steps s ON s.preceding_id = held.reaction_id
GROUP BY held.reaction_id ORDER BY held.reaction_id
"""
SYNC_STEPS = """
UNWIND $rows AS row
MATCH (r:Reaction {id: row.reaction})
OPTIONAL MATCH (r)-[old:PRECEDES]->(n:Reaction) WHERE NOT n.id IN row.following
DELETE old
WITH DISTINCT r, row
UNWIND row.following AS following_id
MATCH (n:Reaction {id: following_id})
MERGE (r)-[:PRECEDES]->(n)
"""
# Compounds take the name a reaction gives them (ATP, G6P), so answers and walks can name them.
COMPOUND_NAMES = f"""
WITH {_HELD}
SELECT DISTINCT ON (rp.entity_id) rp.entity_id AS id, rp.name
FROM reaction_participants rp JOIN held USING (reaction_id)
WHERE rp.entity_kind = 'compound' AND rp.name <> '' ORDER BY rp.entity_id, rp.name
"""
SET_COMPOUND_NAMES = "UNWIND $rows AS row MATCH (c:Compound {id: row.id}) SET c.name = row.name"

# The steps, in load order: complexes before the edges that point at them.
LOAD_STEPS: tuple[tuple[str, str, str], ...] = (
    ("complexes", MERGE_COMPLEXES, COMPLEXES),
    *((f"reaction_{role}s", sync_participants(rel), participants_sql(role)) for role, rel in ROLE_TYPES.items()),
    ("reaction_steps", SYNC_STEPS, STEPS),
    ("compound_names", SET_COMPOUND_NAMES, COMPOUND_NAMES),
)
LIST_ROW_QUERIES = frozenset(query for _, query, _ in LOAD_STEPS)
# A complex no reaction names any more leaves with its edges.
PRUNE_COMPLEXES = "MATCH (c:Complex) WHERE NOT (c)<-[]-(:Reaction) DETACH DELETE c"
