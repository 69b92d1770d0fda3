"""Checksums of what the platform stores, to say "nothing changed" exactly: per Postgres table, a row count and
an order-independent hash of every row; for Neo4j, node counts per label, relationship counts per type and a hash
of the stable ids. Two states are the same when their checksums are equal."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from psycopg import sql
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

if TYPE_CHECKING:
    from neo4j import Driver

# Table names come from the catalogue (never from users); rows are hashed in a fixed order so the physical order
# of a table does not matter.
# Every schema the platform writes: public, flux_index (versioned chunk tables) and dbt's (views hold no state).
_TABLES = text(
    "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
    " AND table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg\\_%'"
    " ORDER BY table_schema, table_name"
)
_ROW_HASH = (
    "SELECT count(*), coalesce(md5(string_agg(h, '' ORDER BY h)), '')"
    " FROM (SELECT md5((to_jsonb(t) - CAST({} AS text[]))::text) AS h FROM {} t) rows"
)


@dataclass(frozen=True)
class TableChecksum:
    rows: int
    digest: str


def table_names(conn: Connection) -> list[str]:
    """`name` for public tables, `schema.name` for the others."""
    return [name if schema == "public" else f"{schema}.{name}" for schema, name in conn.execute(_TABLES)]


def table_checksums(
    engine: Engine,
    tables: list[str] | None = None,
    exclude: frozenset[str] = frozenset(),
    ignore_columns: dict[str, list[str]] | None = None,
) -> dict[str, TableChecksum]:
    """One checksum per table (every table the platform writes, by default), read in one snapshot transaction.
    `ignore_columns` leaves named columns out of a table's rows (e.g. a timestamp a re-confirmation bumps)."""
    with engine.connect() as conn:
        conn.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"))
        names = [t for t in (tables or table_names(conn)) if t not in exclude]
        result: dict[str, TableChecksum] = {}
        for name in names:
            ignored = sql.Literal((ignore_columns or {}).get(name, []))
            identifier = sql.Identifier(*name.split(".", 1))
            statement = sql.SQL(_ROW_HASH).format(ignored, identifier).as_string(None)
            rows, digest = conn.execute(text(statement)).one()
            result[name] = TableChecksum(int(rows), str(digest))
        conn.rollback()
    return result


def graph_checksums(driver: Driver) -> dict[str, str | int]:
    """Node counts per label, relationship counts per type, and a hash of node ids and relationship endpoints."""
    with driver.session() as session:
        labels = session.run("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label")
        result: dict[str, str | int] = {f"label:{r['label']}": r["n"] for r in labels}
        types = session.run("MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n ORDER BY type")
        result |= {f"type:{r['type']}": r["n"] for r in types}
        # Nodes are merged on `id` (Species on `name`): element ids would differ between two equal loads.
        nodes = session.run("MATCH (n) RETURN labels(n) AS labels, coalesce(n.id, n.name, elementId(n)) AS id")
        result["nodes"] = _digest(f"{sorted(r['labels'])}{r['id']}" for r in nodes)
        edges = session.run(
            "MATCH (a)-[r]->(b) RETURN type(r) AS type, coalesce(a.id, a.name, elementId(a)) AS a,"
            " coalesce(b.id, b.name, elementId(b)) AS b"
        )
        result["relationships"] = _digest(f"{r['a']}-{r['type']}->{r['b']}" for r in edges)
    return result


def _digest(items: object) -> str:
    return hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()  # type: ignore[arg-type]
