"""Which index serving reads: the most recently *published* `index_versions` row (written by the
`published_index` asset at the end of a successful run), never whatever a running job is half-way through."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ProgrammingError

from dagster_project.settings import FluxConfigError


class NoPublishedIndexError(FluxConfigError):
    def __init__(self, detail: str) -> None:
        super().__init__("FLUX_DATABASE_URL", f"no published retrieval index: {detail}; run `make run` or "
                         "materialize `published_index` (flux materialize)")


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


def current_index(engine: Engine) -> IndexState:
    try:
        with engine.connect() as conn:
            row = conn.execute(text(
                "SELECT version, bm25_path, embedding_model, chunk_count, vector_count, pathway_count,"
                " dataset_version, pipeline_version, dagster_run_id, published_at FROM index_versions"
                " ORDER BY published_at DESC LIMIT 1")).one_or_none()
    except ProgrammingError as exc:
        raise NoPublishedIndexError("the index_versions table does not exist") from exc
    if row is None:
        raise NoPublishedIndexError("index_versions is empty")
    return IndexState(row.version, Path(row.bm25_path), row.embedding_model, row.chunk_count, row.vector_count,
                      row.pathway_count, row.dataset_version, row.pipeline_version, row.dagster_run_id,
                      row.published_at)
