"""Blue/green chunk tables: each index version serves from `flux_index.chunks_<key>`, an immutable copy of the
active, embedded chunks (text, source, title, vector) with its own HNSW index, built beside the published one.

The key hashes everything the table holds (chunk ids, embedded content hashes, document source and title, the
model, the HNSW parameters), so an unchanged corpus keeps its table and a changed one gets a new table while the
old one goes on serving. The table is created, filled and indexed under a temporary name and renamed in the same
transaction: it either exists complete or not at all.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from psycopg import sql
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from dagster_project.core.settings import FluxSettings

SCHEMA = "flux_index"
TABLE_NAME = re.compile(r"^chunks_[0-9a-f]{16}$")
_ACTIVE_EMBEDDED = (
    "FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status = 'active' AND c.embedding IS NOT NULL"
)
_KEY_PARTS = text(
    "SELECT count(*), coalesce(md5(string_agg(c.id || ':' || c.embedded_content_hash || ':' || d.source || ':'"
    " || md5(d.title) || ':' || c.embedding_model, ',' ORDER BY c.id)), '') " + _ACTIVE_EMBEDDED
)
_EXISTS = text("SELECT to_regclass(:q) IS NOT NULL")


class IndexTableError(RuntimeError):
    """A chunk table name that is not one of ours, or a table that is missing."""


@dataclass(frozen=True)
class ChunkTable:
    name: str
    rows: int
    action: str  # "built" or "kept"


def qualified(name: str) -> sql.Composed:
    """`"flux_index"."chunks_<key>"`, for a name that matches TABLE_NAME (refused otherwise)."""
    if not TABLE_NAME.match(name):
        raise IndexTableError(f"not a chunk table name: {name!r}")
    return sql.Identifier(SCHEMA, name)  # type: ignore[return-value]


def as_sql(statement: sql.Composable) -> str:
    return statement.as_string(None)


def table_key(conn: Connection, hnsw_m: int, hnsw_ef_construction: int) -> tuple[str, int]:
    """(the table name for the current active, embedded chunks, how many there are)."""
    rows, digest = conn.execute(_KEY_PARTS).one()
    key = hashlib.sha256(f"{digest}|m={int(hnsw_m)}|ef={int(hnsw_ef_construction)}".encode()).hexdigest()[:16]
    return f"chunks_{key}", int(rows)


def table_exists(conn: Connection, name: str) -> bool:
    return bool(conn.execute(_EXISTS, {"q": as_sql(qualified(name))}).scalar_one())


def build_chunk_table(engine: Engine, hnsw_m: int, hnsw_ef_construction: int) -> ChunkTable:
    """The chunk table for the current chunks: kept when it exists, else built complete in one transaction."""
    with engine.connect() as conn:
        name, rows = table_key(conn, hnsw_m, hnsw_ef_construction)
        if table_exists(conn, name):
            return ChunkTable(name, rows, "kept")
    building = f"{name}_building"
    target = sql.Identifier(SCHEMA, building)
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL maintenance_work_mem = '512MB'"))
        conn.execute(text(as_sql(sql.SQL("DROP TABLE IF EXISTS {}").format(target))))
        create = sql.SQL(
            "CREATE TABLE {} AS SELECT c.id, c.content, c.content_hash, c.embedding, d.source, d.title, d.external_id "
        ).format(target) + sql.SQL(_ACTIVE_EMBEDDED)
        conn.execute(text(as_sql(create)))
        conn.execute(text(as_sql(sql.SQL("ALTER TABLE {} ADD PRIMARY KEY (id)").format(target))))
        # m and ef_construction are validated integers from settings, not user text.
        conn.execute(
            text(
                as_sql(
                    sql.SQL(
                        "CREATE INDEX ON {} USING hnsw (embedding vector_cosine_ops)"
                        " WITH (m = {}, ef_construction = {})"
                    ).format(target, sql.Literal(int(hnsw_m)), sql.Literal(int(hnsw_ef_construction)))
                )
            )
        )
        conn.execute(text(as_sql(sql.SQL("ALTER TABLE {} RENAME TO {}").format(target, sql.Identifier(name)))))
        built = table_rows(conn, name)
    return ChunkTable(name, built, "built")


def table_rows(conn: Connection, name: str) -> int:
    return int(conn.execute(text(as_sql(sql.SQL("SELECT count(*) FROM {}").format(qualified(name))))).scalar_one())


def hnsw_definition(conn: Connection, name: str) -> str | None:
    return conn.execute(
        text("SELECT indexdef FROM pg_indexes WHERE schemaname = :s AND tablename = :t AND indexdef LIKE '%hnsw%'"),
        {"s": SCHEMA, "t": name},
    ).scalar()


def chunk_tables(conn: Connection) -> list[str]:
    rows = conn.execute(
        text("SELECT tablename FROM pg_tables WHERE schemaname = :s ORDER BY tablename"), {"s": SCHEMA}
    ).all()
    return [r[0] for r in rows if TABLE_NAME.match(r[0])]


def drop_chunk_table(conn: Connection, name: str) -> None:
    conn.execute(text(as_sql(sql.SQL("DROP TABLE IF EXISTS {}").format(qualified(name)))))


def bm25_root(settings: FluxSettings) -> Path:
    """Where the BM25 indexes of every index version live (one folder per version)."""
    return settings.home / "indexes" / "bm25"
