"""Chunks and Ray embeddings through real Postgres and a real local Ray cluster, in a database of their own:
unchanged → nothing embedded; one document changed → only its chunks; model changed → everything; a run killed
mid-way leaves whole batches only and the next run finishes the rest. Each test sets up what it needs and leaves the
demo as it found it (the same weights under another model name stand for a new model, renamed back in SQL)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import dagster as dg
import numpy as np
import pytest
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection
from dagster_project.defs.resources.ray import ensure_ray
from dagster_project.index.chunk_store import chunks_to_embed, write_vector_batches
from dagster_project.index.encoder import resolve_model_path
from dagster_project.index.ray_actors import RayLayout, embed_on_ray
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull
from tests.support.session import demo_read_later

# One model copy with both CPUs: what a local 2-CPU cluster gets from plan_layout.
ONE_ACTOR = RayLayout(actors=1, cpus_per_actor=2)

INDEX = "group:index"


def _meta(asset: str) -> dict[str, object]:
    with dg.DagsterInstance.get() as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey(asset))
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}  # type: ignore[union-attr]


def _vectors(settings: FluxSettings) -> dict[str, tuple[str, str]]:
    with engine_for(settings.platform_database_url).connect() as conn:
        rows = conn.execute(text("SELECT id, embedding::text, embedding_model FROM chunks"))
        return {r[0]: (r[1], r[2]) for r in rows}


def test_cold_run_chunks_and_embeds_every_document(demo_platform: FluxSettings) -> None:
    with engine_for(demo_platform.platform_database_url).connect() as conn:
        docs = conn.execute(text("SELECT count(*) FROM documents WHERE status = 'active'")).scalar_one()
        chunk_docs = conn.execute(text("SELECT count(DISTINCT document_id) FROM chunks")).scalar_one()
        bad_ids = conn.execute(
            text(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE c.id <> d.source || '_' || d.external_id || '_' || c.chunk_index"
            )
        ).scalar_one()
        first = conn.execute(
            text(
                "SELECT c.content, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE c.chunk_index = 0 LIMIT 1"
            )
        ).one()
    assert docs > 60 and chunk_docs == docs and bad_ids == 0
    assert first.content.startswith(first.title)
    assert all(vec is not None for vec, _ in _vectors(demo_platform).values())


def test_unchanged_input_embeds_nothing(demo_platform: FluxSettings) -> None:
    before = _vectors(demo_platform)
    assert materialize_selection(demo_platform, INDEX).success
    assert _meta("chunks")["documents_chunked"] == 0
    assert _meta("chunk_embeddings")["chunks_embedded"] == 0
    assert _meta("chunk_vector_index")["action"] == "kept"
    assert _vectors(demo_platform) == before


def _rename_model(settings: FluxSettings, old: str, new: str) -> None:
    """Relabel vectors: the same weights under another name need no re-encoding to stand for either model."""
    with engine_for(settings.platform_database_url).begin() as conn:
        conn.execute(
            text("UPDATE chunks SET embedding_model = :new WHERE embedding_model = :old"), {"new": new, "old": old}
        )


@pytest.fixture
def openalex_restored(demo_platform: FluxSettings, request: pytest.FixtureRequest) -> Iterator[FluxSettings]:
    """The demo's openalex pull and its chunks as they were, after the test (even on failure) — when a later test
    reads the demo (the test is marked to run last, so in a whole-suite run none does)."""
    manifest = latest_manifest("openalex", demo_platform.raw_root_path)
    original = load_files(manifest, demo_platform.raw_root_path)
    yield demo_platform
    if demo_read_later(request):
        write_pull(RawPull("openalex", original, release=manifest.release), demo_platform.raw_root_path)
        assert materialize_selection(demo_platform, "key:openalex_documents or group:index").success


@pytest.mark.changes_demo
def test_one_changed_document_re_embeds_only_its_chunks(openalex_restored: FluxSettings) -> None:
    demo_platform = openalex_restored
    manifest = latest_manifest("openalex", demo_platform.raw_root_path)
    files = load_files(manifest, demo_platform.raw_root_path)
    page = json.loads(files["works_page1.json"])
    work = page["results"][0]
    work_id = work["id"].rsplit("/", 1)[-1]
    work["abstract_inverted_index"] = {"Completely": [0], "new": [1], "findings": [2], "on": [3], "MDM2.": [4]}
    files["works_page1.json"] = json.dumps(page).encode()
    write_pull(RawPull("openalex", files, release=manifest.release), demo_platform.raw_root_path)
    before = _vectors(demo_platform)

    assert materialize_selection(demo_platform, "key:openalex_documents or group:index").success
    after = _vectors(demo_platform)
    changed = {cid for cid in after if before.get(cid) != after[cid]}
    assert changed and all(cid.startswith(f"openalex_{work_id}_") for cid in changed)
    assert _meta("chunks")["documents_chunked"] == 1
    chunked = _meta("chunks")
    assert chunked["chunks_embedded"] == len(changed)  # embedded where they were chunked, on Ray
    assert len(chunked["ray_nodes"]) == 1 and chunked["device"] == "cpu" and chunked["ray_actors"] == 1
    assert _meta("chunk_embeddings")["chunks_embedded"] == 0


@pytest.mark.resilience  # a run killed mid-way: with the fault tests, in `make test-extended`
def test_killed_run_leaves_whole_batches_and_the_next_run_finishes(demo_platform: FluxSettings) -> None:
    new_model = resolve_model_path("all-MiniLM-L6-v2")  # same weights under another name: a "new model"
    engine = engine_for(demo_platform.platform_database_url)
    pending = chunks_to_embed(engine, new_model)
    ensure_ray(None, demo_platform.ops.ray_num_cpus, demo_platform.home / "ray")

    def dies_after_first_batch() -> Iterator[dict[str, np.ndarray]]:
        for n, batch in enumerate(embed_on_ray(pending, new_model, ONE_ACTOR, 8)):
            if n == 1:
                raise RuntimeError("injected failure mid-run")
            yield batch

    try:
        with pytest.raises(RuntimeError, match="injected"):
            write_vector_batches(engine, dies_after_first_batch(), new_model)
        with engine.connect() as conn:
            done = conn.execute(text("SELECT count(*) FROM chunks WHERE embedding_model = :m"), {"m": new_model})
            done = done.scalar_one()
        assert done == 32, "exactly one whole write batch (4 x encode batch) committed"

        outcome = materialize_selection(demo_platform.evolve(embedding_model=new_model), INDEX)
        assert outcome.success and outcome.checks_passed == outcome.checks_total
        assert _meta("chunk_embeddings")["chunks_embedded"] == len(pending) - done
        assert {model for _, model in _vectors(demo_platform).values()} == {new_model}
    finally:
        _rename_model(demo_platform, new_model, demo_platform.index.embedding_model)


@pytest.mark.slow  # re-embeds every demo chunk: `make test-extended`
def test_model_change_re_embeds_everything(demo_platform: FluxSettings) -> None:
    default = demo_platform.index.embedding_model
    _rename_model(demo_platform, default, "an-earlier-model")  # every vector now belongs to another model
    total = len(_vectors(demo_platform))
    try:
        outcome = materialize_selection(demo_platform, INDEX)
        assert outcome.success
        assert _meta("chunk_embeddings")["chunks_embedded"] == total
        assert {model for _, model in _vectors(demo_platform).values()} == {default}
    finally:
        _rename_model(demo_platform, "an-earlier-model", default)
