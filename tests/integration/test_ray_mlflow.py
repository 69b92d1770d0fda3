"""Ray and MLflow round trips against a real local Ray cluster and MLflow's Postgres backend store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dagster_project.core.experiments import configure_mlflow
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.resources.ray import ensure_ray
from dagster_project.index import ray_actors as embedding
from dagster_project.index.chunker import ChunkerConfig, chunk_document
from dagster_project.index.encoder import Embedder


@pytest.fixture(scope="module")
def ray_cluster(stack: FluxSettings):  # type: ignore[no-untyped-def]
    import ray

    resources = ensure_ray(None, stack.ops.ray_num_cpus, stack.home / "ray")
    yield resources
    ray.shutdown()


TEXTS = {  # chunk id → text: unrelated texts, ids out of order, so a vector given to the wrong row shows
    "c7": "Hexokinase phosphorylates glucose in the first step of glycolysis.",
    "c2": "Soil bacteria fix nitrogen in the root nodules of legumes.",
    "c9": "TP53 encodes a tumour suppressor that triggers apoptosis after DNA damage.",
    "c1": "Insulin lowers blood glucose by promoting its uptake into muscle.",
    "c5": 'Pathway R-HSA-70171 "Glycolysis" (Reactome).',
    "c3": "Mitochondria produce most of the cell's ATP.",
    "c8": "MDM2 binds p53 and marks it for degradation.",
}
DOCUMENTS = [  # (document id, title, content): two topics each, so the semantic split has work to do
    (
        11,
        "Glycolysis and soil",
        "Hexokinase phosphorylates glucose in the first step of glycolysis. "
        "Phosphofructokinase is the main control point of the pathway. Pyruvate kinase makes ATP in the last step. "
        "Soil bacteria fix nitrogen in root nodules of legumes. Rhizobia live inside the nodules and exchange "
        "ammonia for sugars. Crop yields depend on this symbiosis.",
    ),
    (
        4,
        "",
        "TP53 encodes a tumour suppressor that triggers apoptosis after DNA damage. MDM2 binds p53 and marks it "
        "for degradation. Insulin lowers blood glucose by promoting uptake into muscle. GLUT4 moves to the cell "
        "membrane when insulin binds its receptor. Mitochondria produce most of the cell's ATP.",
    ),
    (7, "A short note", "Only one sentence here."),
]
ONE_ACTOR = embedding.RayLayout(actors=1, cpus_per_actor=1)


@pytest.mark.slow  # model actors and a Ray Data pipeline for seven rows: `make test-extended`
def test_chunk_vectors_from_the_cluster_are_the_in_process_ones(
    ray_cluster: dict,  # type: ignore[type-arg]
    stack: FluxSettings,
) -> None:
    """`embed_on_ray` (the chunk_embeddings asset's path): each chunk's vector, computed by a model actor in blocks
    of two rows, is the one the in-process embedder (serving's) gives that chunk's text, under its own id and hash."""
    rows = pd.DataFrame(
        {"id": list(TEXTS), "content": list(TEXTS.values()), "content_hash": [f"hash-of-{i}" for i in TEXTS]}
    )
    batches = list(embedding.embed_on_ray(rows, stack.index.embedding_model, ONE_ACTOR, batch_size=2))
    got = {
        str(i): (str(h), np.asarray(v))
        for b in batches
        for i, h, v in zip(b["id"], b["content_hash"], b["embedding"], strict=True)
    }
    assert sorted(got) == sorted(TEXTS)
    expected = Embedder(model_name=stack.index.embedding_model).embed_documents(list(TEXTS.values()))
    for ident, vector in zip(TEXTS, expected, strict=True):
        content_hash, on_ray = got[ident]
        assert content_hash == f"hash-of-{ident}"
        assert on_ray.shape == (stack.index.embedding_dim,)
        np.testing.assert_allclose(on_ray, vector, atol=1e-5, err_msg=ident)
    assert {str(d) for b in batches for d in b["device"]} == {"cpu"}


@pytest.mark.slow  # model actors for three documents: `make test-extended`
def test_documents_chunked_on_the_cluster_match_in_process_chunking(
    ray_cluster: dict,  # type: ignore[type-arg]
    stack: FluxSettings,
) -> None:
    """`chunk_and_embed_on_ray` (the chunks asset's path): per document, the chunk texts the in-process chunker
    makes with the same model, in order, each with the in-process vector of its text."""
    config = ChunkerConfig(min_chars=80, max_chars=400)
    embedder = Embedder(model_name=stack.index.embedding_model)
    documents = pd.DataFrame(DOCUMENTS, columns=["document_id", "title", "content"])
    chunked = {
        d.document_id: d
        for d in embedding.chunk_and_embed_on_ray(documents, stack.index.embedding_model, ONE_ACTOR, 4, config)
    }
    assert sorted(chunked) == sorted(d for d, _, _ in DOCUMENTS)
    for document_id, title, content in DOCUMENTS:
        texts = chunk_document(title, content, lambda s: embedder.embed_documents(list(s)), config)
        assert chunked[document_id].texts == texts, document_id
        np.testing.assert_allclose(chunked[document_id].vectors, embedder.embed_documents(texts), atol=1e-5)
    # Two documents come back in several chunks: their reassembly, in order, from Ray's rows is exercised.
    assert len(chunked[11].texts) > 1 and len(chunked[4].texts) > 1


def test_model_actors_the_cluster_has_no_room_for_fail_clearly(
    ray_cluster: dict,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedding, "ACTOR_START_TIMEOUT_S", 3.0)
    too_big = embedding.RayLayout(actors=1, cpus_per_actor=int(ray_cluster["CPU"]) + 62)
    with pytest.raises(RuntimeError, match=r"did not start within 3 s; the cluster has .*'CPU'.*EMBEDDING_ACTORS"):
        embedding.start_chunk_actors("all-MiniLM-L6-v2", too_big, 8, ChunkerConfig())


def test_mlflow_run_is_recorded_in_postgres_and_read_back(stack: FluxSettings, tmp_path: Path) -> None:
    import mlflow
    from mlflow.tracking import MlflowClient

    assert stack.resolved_mlflow_tracking_uri.startswith("postgresql")
    experiment_id = configure_mlflow(
        stack.resolved_mlflow_tracking_uri, "flux-test", stack.home / "mlflow" / "artifacts"
    )
    note = tmp_path / "note.txt"
    note.write_text("hello")
    with mlflow.start_run(experiment_id=experiment_id) as run:
        mlflow.log_param("dataset_version", "demo-1")
        mlflow.log_metric("hit_at_5", 0.75)
        mlflow.log_artifact(str(note))
    client = MlflowClient(stack.resolved_mlflow_tracking_uri)
    stored = client.get_run(run.info.run_id)
    assert stored.data.params["dataset_version"] == "demo-1"
    assert stored.data.metrics["hit_at_5"] == pytest.approx(0.75)
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["note.txt"]
    # The same experiment is found again, not duplicated.
    assert (
        configure_mlflow(stack.resolved_mlflow_tracking_uri, "flux-test", stack.home / "mlflow" / "artifacts")
        == experiment_id
    )
