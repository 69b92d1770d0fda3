"""Content digests of tables and queries, computed inside Postgres: a stage whose inputs digest the same as when
it last succeeded has nothing to do. A digest is the row count plus the sum of a 64-bit hash of each row's text,
so it is independent of row order, costs one scan (about 0.1 s per 100k rows) and changes with any inserted,
deleted or edited row."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from sqlalchemy import Engine, text

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


def _digest_sql(relation_sql: str) -> str:
    return f"SELECT count(*), coalesce(sum(hashtextextended(r::text, 0)::numeric), 0) FROM ({relation_sql}) r"


def _format(count: int, total: object) -> str:
    return f"{count}:{hashlib.sha256(str(total).encode()).hexdigest()[:16]}"


def table_digests(engine: Engine, tables: Iterable[str]) -> dict[str, str]:
    """{table: digest} for platform tables (plain lower-case names; anything else is refused, not quoted)."""
    names = sorted(set(tables))
    if bad := [name for name in names if not _IDENTIFIER.match(name)]:
        raise ValueError(f"not a table name: {bad}")
    return query_digests(engine, {name: f"SELECT * FROM {name}" for name in names})


def query_digests(engine: Engine, queries: Mapping[str, str]) -> dict[str, str]:
    """{name: digest of the rows its query returns}, all read in one transaction (one consistent snapshot)."""
    found: dict[str, str] = {}
    with engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
        for name, sql in queries.items():
            count, total = conn.execute(text(_digest_sql(sql))).one()
            found[name] = _format(count, total)
    return found


def combined(parts: Mapping[str, str]) -> str:
    """One digest for a set of named digests (order of the mapping does not matter)."""
    digest = hashlib.sha256()
    for name in sorted(parts):
        digest.update(f"{name}={parts[name]}\n".encode())
    return digest.hexdigest()[:16]
