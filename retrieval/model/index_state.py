"""Which index serving reads: the most recently *published* `index_versions` row. A version is recorded as a
candidate by `candidate_index` and published by `published_index` only after the eval scorecards' blocking
regression checks pass, so serving never reads a version that failed its gates or a run's half-built state."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Generic, TypeVar

from sqlalchemy import TextClause, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ProgrammingError

from dagster_project.core.settings import FluxConfigError

T = TypeVar("T")


class NoPublishedIndexError(FluxConfigError):
    """Nothing has been published yet: a step not run, not a wrong variable (`flux index list` shows what the
    configured database holds)."""

    def __init__(self, detail: str) -> None:
        super().__init__(
            None,
            f"no published retrieval index: {detail}; run `make run` or materialize "
            "`published_index` (flux materialize); `flux index list` shows what this database holds",
        )


@dataclass(frozen=True)
class IndexState:
    version: str
    bm25_path: Path
    embedding_model: str
    chunk_count: int
    vector_count: int
    pathway_count: int
    dataset_version: str
    pipeline_version: str
    dagster_run_id: str
    published_at: datetime
    chunk_table: str  # flux_index.<chunk_table>: this version's own chunks and vectors (blue/green)


_SELECT = (
    "SELECT version, bm25_path, embedding_model, chunk_count, vector_count, pathway_count, dataset_version,"
    " pipeline_version, dagster_run_id, coalesce(published_at, candidate_at) AS at, chunk_table"
    " FROM index_versions"
)
PUBLISHED = text(
    f"{_SELECT} WHERE published_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY published_at DESC LIMIT 1"
)
CANDIDATE = text(f"{_SELECT} ORDER BY candidate_at DESC LIMIT 1")


def _read(engine: Engine, statement: TextClause, empty: str) -> IndexState:
    try:
        with engine.connect() as conn:
            row = conn.execute(statement).one_or_none()
    except ProgrammingError as exc:
        raise NoPublishedIndexError("the index_versions table does not exist") from exc
    if row is None:
        raise NoPublishedIndexError(empty)
    if row.chunk_table is None:
        raise NoPublishedIndexError(
            f"index {row.version} predates versioned chunk tables; materialize the index and serving groups once"
        )
    return IndexState(
        row.version,
        Path(row.bm25_path),
        row.embedding_model,
        row.chunk_count,
        row.vector_count,
        row.pathway_count,
        row.dataset_version,
        row.pipeline_version,
        row.dagster_run_id,
        row.at,
        row.chunk_table,
    )


def current_index(engine: Engine) -> IndexState:
    """What serving reads: the most recently published version."""
    return _read(engine, PUBLISHED, "no index version has passed its eval gates and been published yet")


def latest_candidate(engine: Engine) -> IndexState:
    """The most recently built version, published or not (what the eval scorecards measure)."""
    return _read(engine, CANDIDATE, "no index version has been built yet")


class PerIndex(Generic[T]):
    """One value built from the database per (database, index version) per process; a new index version (a new
    publish) rebuilds it, and only the newest is kept."""

    def __init__(self, build: Callable[[Engine], T]) -> None:
        self._build = build
        self._cache: dict[tuple[str, str], T] = {}
        self._lock = threading.Lock()

    def get(self, engine: Engine, version: str) -> T:
        key = (engine.url.render_as_string(hide_password=True), version)
        with self._lock:
            if key not in self._cache:
                value = self._build(engine)
                self._cache.clear()
                self._cache[key] = value
            return self._cache[key]
