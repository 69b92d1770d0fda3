"""COPY rows into a transaction-scoped temp table: the bulk path every loader uses (one round trip per batch)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection


def copy_into_temp(
    conn: Connection, table: str, columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]
) -> int:
    """Create TEMP `table` (dropped at commit) with `columns` [(name, sql type)] and COPY `rows` into it.

    `table` and the column names are code constants, never input."""
    ddl = ", ".join(f"{name} {sqltype}" for name, sqltype in columns)
    conn.exec_driver_sql(f"CREATE TEMP TABLE {table} ({ddl}) ON COMMIT DROP")
    names = ", ".join(name for name, _ in columns)
    count = 0
    raw = conn.connection.driver_connection
    with raw.cursor() as cur, cur.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count
