"""Rows for the graph, read from Postgres (the graph is a projection of the structured tables)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

from dagster_project.graph import disease_rows, loader, reaction_rows
from dagster_project.graph.mentions import build_dictionary, find_mentions

PATHWAYS = """
SELECT pathway_id AS id, source, name, species, category, subcategory FROM pathways WHERE status = 'active'
"""
HIERARCHY = """
SELECT p.pathway_id AS child, parent FROM pathways p CROSS JOIN LATERAL unnest(p.parents) AS parent
JOIN pathways q ON q.pathway_id = parent AND q.status = 'active' WHERE p.status = 'active'
"""
REACTIONS = """
SELECT r.reaction_id AS id, r.name, r.pathway_id AS pathway FROM reactions r
JOIN pathways p ON p.pathway_id = r.pathway_id AND p.status = 'active'
"""
GENES = """
SELECT hgnc_id AS id, symbol, name, entrez_id AS entrez, uniprot_ids AS uniprot FROM gene_identifiers
WHERE status = 'Approved'
"""
# Every gene member, whatever its id space, becomes the HGNC gene it names.
GENE_MEMBERS = """
WITH acc AS (SELECT unnest(uniprot_ids) AS member_id, hgnc_id FROM gene_identifiers WHERE status = 'Approved'),
     sym AS (SELECT symbol AS member_id, hgnc_id FROM gene_identifiers WHERE status = 'Approved'),
     ent AS (SELECT entrez_id AS member_id, hgnc_id FROM gene_identifiers
             WHERE status = 'Approved' AND entrez_id IS NOT NULL),
     mapped AS (
        SELECT m.pathway_id, coalesce(acc.hgnc_id, sym.hgnc_id, ent.hgnc_id) AS hgnc_id
        FROM pathway_members m JOIN pathways p USING (pathway_id)
        LEFT JOIN acc ON m.id_space = 'uniprot' AND acc.member_id = m.member_id
        LEFT JOIN sym ON m.id_space = 'hgnc_symbol' AND sym.member_id = m.member_id
        LEFT JOIN ent ON m.id_space = 'entrez' AND ent.member_id = m.member_id
        WHERE p.status = 'active' AND m.member_kind = 'gene')
-- Every active pathway has a row, an empty one when none of its members is placed: its stale edges go too.
SELECT p.pathway_id AS pathway,
       coalesce(array_agg(DISTINCT mapped.hgnc_id ORDER BY mapped.hgnc_id)
                FILTER (WHERE mapped.hgnc_id IS NOT NULL), '{}') AS members
FROM pathways p LEFT JOIN mapped USING (pathway_id) WHERE p.status = 'active' GROUP BY p.pathway_id
"""
COMPOUND_MEMBERS = """
SELECT p.pathway_id AS pathway,
       coalesce(array_agg(DISTINCT CASE m.id_space WHEN 'chebi' THEN m.member_id ELSE 'KEGG:' || m.member_id END)
                FILTER (WHERE m.member_id IS NOT NULL), '{}') AS members
FROM pathways p LEFT JOIN pathway_members m ON m.pathway_id = p.pathway_id AND m.member_kind = 'compound'
WHERE p.status = 'active' GROUP BY p.pathway_id
"""
PAPERS = """
SELECT source || ':' || external_id AS id, source, title, content, (metadata ->> 'year')::int AS year
FROM documents WHERE type = 'paper' AND status = 'active'
"""


def fetch(engine: Engine, query: str) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(text(query))]


MENTION_DICTIONARY = "SELECT hgnc_id, symbol, aliases FROM gene_identifiers WHERE status = 'Approved'"


def paper_rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        genes = conn.execute(text(MENTION_DICTIONARY)).all()
    dictionary = build_dictionary((g.hgnc_id, g.symbol, list(g.aliases)) for g in genes)
    papers = fetch(engine, PAPERS)
    for paper in papers:
        paper["genes"] = find_mentions(f"{paper['title']} {paper.pop('content')}", dictionary)
    return papers


# The graph's load order: (step, its Cypher statement, the SQL of its rows; None = papers with their gene mentions).
LOAD_STEPS: tuple[tuple[str, str, str | None], ...] = (
    ("pathways", loader.MERGE_PATHWAYS, PATHWAYS),
    ("hierarchy", loader.MERGE_HIERARCHY, HIERARCHY),
    ("reactions", loader.MERGE_REACTIONS, REACTIONS),
    ("genes", loader.MERGE_GENES, GENES),
    ("gene_members", loader.SYNC_GENE_MEMBERS, GENE_MEMBERS),
    ("compound_members", loader.SYNC_COMPOUND_MEMBERS, COMPOUND_MEMBERS),
    *reaction_rows.LOAD_STEPS,
    *disease_rows.LOAD_STEPS,
    ("papers", loader.MERGE_PAPERS, None),
)


def step_rows(engine: Engine, sql: str | None) -> list[dict[str, Any]]:
    return paper_rows(engine) if sql is None else fetch(engine, sql)


# Everything the graph is projected from, for its digest: each step's rows, the papers and the mention dictionary.
INPUT_QUERIES: dict[str, str] = {
    **{name: sql for name, _, sql in LOAD_STEPS if sql is not None},
    "papers": PAPERS,
    "mention_dictionary": MENTION_DICTIONARY,
}
