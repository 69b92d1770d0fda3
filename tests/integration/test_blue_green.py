"""Blue/green index: a refresh builds the new version's chunk table beside the served one and switches in one
row update. Queries run without pause through the whole refresh; each result must come entirely from the
version it reports (a result labelled with the old version that carries the new text is a mix). Then `rollback`
serves the old text again, and garbage collection drops the storage only of versions nothing can serve."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection
from dagster_project.index.publishing import collect_garbage, publish_candidate, rollback
from dagster_project.index.tables import bm25_root, table_exists
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull
from retrieval.model.index_state import current_index
from retrieval.model.types import Filters
from retrieval.pipeline import Pipeline
from tests.integration.test_retrieval_pipeline import fresh_cache

# Queries without pause through a whole refresh, publish, rollback and garbage collection: `make test-extended`.
pytestmark = pytest.mark.resilience

REFRESH = "key:openalex_documents or group:index or key:candidate_index"
QUESTION = "How do MDM2 and MDM4 keep p53 levels low in unstressed cells?"
NEW_ABSTRACT = {
    "Ubiquitin": [0],
    "ligase": [1],
    "MDM2": [2],
    "degrades": [3],
    "p53": [4],
    "under": [5],
    "hypoxia": [6],
    "in": [7],
    "a": [8],
    "revised": [9],
    "study.": [10],
}
UNCACHED = Filters(user="blue-green")  # any filter bypasses the caches: every query reads the tables


def _chunk_texts(settings: FluxSettings) -> dict[str, str]:
    with engine_for(settings.platform_database_url).connect() as conn:
        return dict(conn.execute(text("SELECT id, content FROM chunks")).all())  # type: ignore[arg-type]


def _rewrite_work(settings: FluxSettings, index: int, abstract: dict[str, list[int]]) -> None:
    """Pull the openalex files again with one work's abstract replaced (what a source update looks like)."""
    manifest = latest_manifest("openalex", settings.raw_root_path)
    files = load_files(manifest, settings.raw_root_path)
    page = json.loads(files["works_page1.json"])
    page["results"][index]["abstract_inverted_index"] = abstract
    files["works_page1.json"] = json.dumps(page).encode()
    write_pull(RawPull("openalex", files, release=manifest.release), settings.raw_root_path)


_ORIGINAL: dict[str, dict[str, bytes]] = {}


def _restore(settings: FluxSettings) -> None:
    if not _ORIGINAL:
        return
    manifest = latest_manifest("openalex", settings.raw_root_path)
    write_pull(RawPull("openalex", _ORIGINAL.pop("files"), release=manifest.release), settings.raw_root_path)
    assert materialize_selection(settings, REFRESH).success
    publish_candidate(engine_for(settings.platform_database_url))


@pytest.fixture
def refreshed(demo_platform: FluxSettings) -> Iterator[FluxSettings]:
    """Leaves the demo as it found it (the original abstract back and its version serving), even on failure."""
    manifest = latest_manifest("openalex", demo_platform.raw_root_path)
    _ORIGINAL["files"] = load_files(manifest, demo_platform.raw_root_path)
    yield demo_platform
    _restore(demo_platform)


def test_queries_during_a_refresh_never_mix_versions_and_rollback_restores(refreshed: FluxSettings) -> None:
    settings = refreshed
    engine = engine_for(settings.platform_database_url)
    old = current_index(engine)
    old_texts = _chunk_texts(settings)
    pipeline = Pipeline.from_settings(settings, cache=fresh_cache(settings))
    seen: list[tuple[str, list[tuple[str, str]]]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def query_without_pause() -> None:
        while not stop.is_set():
            try:
                result = pipeline.search(QUESTION, UNCACHED)
            except BaseException as exc:
                errors.append(exc)
                return
            seen.append((result.index_version, [(e.id, e.text) for e in result.evidence if e.kind == "chunk"]))

    worker = threading.Thread(target=query_without_pause, daemon=True)
    worker.start()
    try:
        _rewrite_work(settings, 1, NEW_ABSTRACT)
        assert materialize_selection(settings, REFRESH).success
        during = len(seen)
        switch = publish_candidate(engine)
        new_texts = _chunk_texts(settings)
        pipeline.retriever.forget_index()
        while len(seen) < during + 5 and worker.is_alive():
            stop.wait(0.05)
    finally:
        stop.set()
        worker.join(timeout=60)
    assert not errors, errors
    assert switch.previous == old.version and switch.version != old.version
    changed = {cid for cid in new_texts if old_texts.get(cid) != new_texts[cid]}
    assert changed and all(cid.startswith("openalex_W9000000002_") for cid in changed)
    expected = {old.version: old_texts, switch.version: new_texts}
    mixed = [(version, cid) for version, chunks in seen for cid, body in chunks if expected[version].get(cid) != body]
    assert not mixed, mixed[:5]
    versions = [version for version, _ in seen]
    assert versions.count(old.version) >= during > 0 and versions[-1] == switch.version
    assert any(cid in changed for version, chunks in seen if version == switch.version for cid, _ in chunks)

    back = rollback(engine)  # the old table was kept: serving returns to the old text at once
    pipeline.retriever.forget_index()
    again = pipeline.search(QUESTION, UNCACHED)
    assert (back.version, back.previous, again.index_version) == (old.version, switch.version, old.version)
    assert all(old_texts[e.id] == e.text for e in again.evidence if e.kind == "chunk")

    with engine.connect() as conn:
        new_storage = conn.execute(
            text("SELECT chunk_table, bm25_path FROM index_versions WHERE version = :v"), {"v": switch.version}
        ).one()
    # The nightly run brings the original abstract back: the same content is the same version, published again.
    _restore(settings)
    assert current_index(engine).version == old.version
    dropped = collect_garbage(engine, settings.index.index_keep_published, bm25_root(settings))
    with engine.connect() as conn:
        assert table_exists(conn, old.chunk_table) and old.bm25_path.exists()
        assert switch.version in dropped and not table_exists(conn, new_storage.chunk_table)
        dropped_at = conn.execute(
            text("SELECT dropped_at FROM index_versions WHERE version = :v"), {"v": switch.version}
        ).scalar_one()
    assert dropped_at is not None and not Path(new_storage.bm25_path).exists()
