"""What `make run` prints at the end: row counts per table and node counts per label."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver

SUMMARY_TABLES = [
    "schema_migrations",
    "raw_pulls",
    "documents",
    "pathways",
    "pathway_members",
    "gene_identifiers",
    "reactions",
    "reaction_participants",
    "reaction_steps",
    "chunks",
    "quarantine",
    "pathway_mappings",
    "diseases",
    "disease_associations",
    "condition_synonyms",
]


@dataclass(frozen=True)
class PlatformSummary:
    table_rows: dict[str, int]
    node_labels: dict[str, int]
    per_source: dict[str, dict[str, int]]
    equivalences: list[dict[str, object]]
    latest_pulls: dict[str, str]  # source → the mode of its latest raw pull (live, snapshot, demo)


def collect_summary(settings: FluxSettings) -> PlatformSummary:
    tables: dict[str, int] = {}
    with engine_for(settings.platform_database_url).connect() as conn:
        present = set(
            conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")).scalars()
        )
        for table in SUMMARY_TABLES:
            if table in present:
                # Table names come from the fixed list above, never from input.
                tables[table] = conn.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one()
        if "chunks" in present:
            tables["chunks (with a vector)"] = conn.execute(text("SELECT count(embedding) FROM chunks")).scalar_one()
        per_source = _per_source(conn) if {"documents", "quarantine"} <= present else {}
        equivalences = _equivalences(conn) if "pathway_mappings" in present else []
        latest_pulls = _latest_pulls(conn) if "raw_pulls" in present else {}
    driver = graph_driver(settings)
    records = driver.execute_query(
        "MATCH (n) UNWIND labels(n) AS label WITH label WHERE label <> 'FluxMigration'"
        " RETURN label, count(*) AS n ORDER BY label"
    ).records
    labels = {rec["label"]: rec["n"] for rec in records}
    return PlatformSummary(tables, labels, per_source, equivalences, latest_pulls)


def _latest_pulls(conn) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The mode each source's latest raw pull read (a run carries its command's mode, so this is where the data
    came from, whatever the stack was started with)."""
    rows = conn.execute(
        text("SELECT DISTINCT ON (source) source, mode FROM raw_pulls ORDER BY source, retrieved_at DESC")
    )
    return {row.source: row.mode for row in rows}


def _equivalences(conn, limit: int = 15) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """The best-scoring resolved Reactome pathway for each KEGG pathway."""
    rows = conn.execute(
        text("""
        SELECT DISTINCT ON (m.kegg_id) m.reactome_id, r.name AS reactome_name, m.kegg_id, k.name AS kegg_name,
               m.relation, m.shared, m.jaccard
        FROM pathway_mappings m JOIN pathways r ON r.pathway_id = m.reactome_id
        JOIN pathways k ON k.pathway_id = m.kegg_id
        WHERE m.relation <> 'unrelated' ORDER BY m.kegg_id, m.jaccard DESC, m.reactome_size LIMIT :n"""),
        {"n": limit},
    )
    return [dict(row._mapping) for row in rows]


def _per_source(conn) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    """Active documents, gone documents and quarantined records per source."""
    out: dict[str, dict[str, int]] = {}
    for row in conn.execute(text("SELECT source, status, count(*) AS n FROM documents GROUP BY 1, 2")):
        out.setdefault(row.source, {})[f"documents_{row.status}"] = row.n
    for row in conn.execute(text("SELECT source, count(*) AS n FROM quarantine GROUP BY 1")):
        out.setdefault(row.source, {})["quarantined"] = row.n
    if conn.execute(text("SELECT to_regclass('gene_identifiers') IS NOT NULL")).scalar_one():
        genes = conn.execute(text("SELECT count(*) FROM gene_identifiers")).scalar_one()
        if genes:
            out.setdefault("hgnc", {})["genes"] = genes
    if conn.execute(text("SELECT to_regclass('disease_associations') IS NOT NULL")).scalar_one():
        associations = conn.execute(text("SELECT count(*) FROM disease_associations")).scalar_one()
        if associations:
            out.setdefault("clinvar", {})["associations"] = associations
    return out
