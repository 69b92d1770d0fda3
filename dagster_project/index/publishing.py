"""The life of an index version after it is recorded as a candidate: publish (serving switches to its chunk
table and BM25 index in one row update), roll back (serving goes back to the version published before), and
garbage collection (chunk tables and BM25 directories of versions nothing can serve again are dropped).

Serving reads the most recently published version that was not rolled back (retrieval/model/index_state.py)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.index.tables import chunk_tables, drop_chunk_table

SERVED = (
    "SELECT version FROM index_versions WHERE published_at IS NOT NULL AND rolled_back_at IS NULL"
    " ORDER BY published_at DESC"
)


class IndexVersionError(RuntimeError):
    """Nothing to publish or roll back to; the message says what to do."""


@dataclass(frozen=True)
class Switch:
    version: str
    previous: str | None


def publish_candidate(engine: Engine) -> Switch:
    """Serve the latest candidate (re-publishing a rolled-back version is a deliberate choice, so it clears that)."""
    with engine.begin() as conn:
        conn.execute(text("LOCK TABLE index_versions IN SHARE ROW EXCLUSIVE MODE"))
        previous = conn.execute(text(f"{SERVED} LIMIT 1")).scalar()
        version = conn.execute(
            text(
                "UPDATE index_versions SET published_at = now(), rolled_back_at = NULL WHERE version ="
                " (SELECT version FROM index_versions ORDER BY candidate_at DESC LIMIT 1) RETURNING version"
            )
        ).scalar()
    if version is None:
        raise IndexVersionError("no candidate index version to publish; materialize candidate_index first")
    return Switch(version, previous)


def rollback(engine: Engine) -> Switch:
    """Serve again the version published before the current one; the current one is marked rolled back."""
    with engine.begin() as conn:
        conn.execute(text("LOCK TABLE index_versions IN SHARE ROW EXCLUSIVE MODE"))
        served = [r[0] for r in conn.execute(text(f"{SERVED} LIMIT 2")).all()]
        if not served:
            raise IndexVersionError("no published index version to roll back")
        target = conn.execute(
            text(
                "SELECT version FROM index_versions WHERE published_at IS NOT NULL AND rolled_back_at IS NULL"
                " AND dropped_at IS NULL AND version <> :v ORDER BY published_at DESC LIMIT 1"
            ),
            {"v": served[0]},
        ).scalar()
        if target is None:
            raise IndexVersionError(
                f"index {served[0]} is the only published version still kept; there is nothing to roll back to"
            )
        conn.execute(text("UPDATE index_versions SET rolled_back_at = now() WHERE version = :v"), {"v": served[0]})
        conn.execute(text("UPDATE index_versions SET published_at = now() WHERE version = :v"), {"v": target})
    return Switch(target, served[0])


def collect_garbage(engine: Engine, keep_published: int, bm25_root: Path) -> list[str]:
    """Drop what no kept version uses: the latest candidate and the `keep_published` most recent served versions
    stay. Returns the versions whose storage was dropped."""
    with engine.begin() as conn:
        conn.execute(text("LOCK TABLE index_versions IN SHARE ROW EXCLUSIVE MODE"))
        kept = {r[0] for r in conn.execute(text(f"{SERVED} LIMIT :n"), {"n": max(1, int(keep_published))})}
        kept |= {
            r[0] for r in conn.execute(text("SELECT version FROM index_versions ORDER BY candidate_at DESC LIMIT 1"))
        }
        rows = conn.execute(text("SELECT version, chunk_table, bm25_path, dropped_at FROM index_versions")).all()
        kept_tables = {r.chunk_table for r in rows if r.version in kept}
        kept_bm25 = {r.bm25_path for r in rows if r.version in kept}
        dropped = [r.version for r in rows if r.version not in kept and r.dropped_at is None]
        for name in chunk_tables(conn):
            if name not in kept_tables:
                drop_chunk_table(conn, name)
        if dropped:
            conn.execute(text("UPDATE index_versions SET dropped_at = now() WHERE version = ANY(:v)"), {"v": dropped})
    for directory in bm25_root.iterdir() if bm25_root.exists() else []:
        if directory.is_dir() and str(directory) not in kept_bm25:
            shutil.rmtree(directory, ignore_errors=True)
    return sorted(dropped)
