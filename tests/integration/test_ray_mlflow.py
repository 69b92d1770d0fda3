"""Ray and MLflow round trips against a real local Ray cluster and MLflow's Postgres backend store."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_project.core.experiments import configure_mlflow
from dagster_project.core.settings import FluxSettings
from dagster_project.resources.ray import ensure_ray


@pytest.fixture(scope="module")
def ray_cluster(stack: FluxSettings):  # type: ignore[no-untyped-def]
    import ray

    resources = ensure_ray(None, stack.ops.ray_num_cpus, stack.home / "ray")
    yield resources
    ray.shutdown()


def test_ray_task_and_dataset_round_trip(ray_cluster: dict) -> None:  # type: ignore[type-arg]
    import ray

    assert ray_cluster["CPU"] >= 1

    @ray.remote
    def square(x: int) -> int:
        return x * x

    assert ray.get([square.remote(i) for i in range(5)]) == [0, 1, 4, 9, 16]
    ds = ray.data.range(100).map_batches(lambda b: {"id": b["id"] * 2}, batch_format="numpy")
    assert sum(row["id"] for row in ds.take_all()) == 2 * sum(range(100))


def test_model_actors_the_cluster_has_no_room_for_fail_clearly(ray_cluster: dict,  # type: ignore[type-arg]
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster_project import embedding
    from dagster_project.chunker import ChunkerConfig

    monkeypatch.setattr(embedding, "ACTOR_START_TIMEOUT_S", 3.0)
    too_big = embedding.RayLayout(actors=1, cpus_per_actor=int(ray_cluster["CPU"]) + 62)
    with pytest.raises(RuntimeError, match=r"did not start within 3 s; the cluster has .*'CPU'.*EMBEDDING_ACTORS"):
        embedding.start_chunk_actors("all-MiniLM-L6-v2", too_big, 8, ChunkerConfig())


def test_mlflow_run_is_recorded_in_postgres_and_read_back(stack: FluxSettings, tmp_path: Path) -> None:
    import mlflow
    from mlflow.tracking import MlflowClient

    assert stack.resolved_mlflow_tracking_uri.startswith("postgresql")
    experiment_id = configure_mlflow(stack.resolved_mlflow_tracking_uri, "flux-test",
                                     stack.home / "mlflow" / "artifacts")
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
    assert configure_mlflow(stack.resolved_mlflow_tracking_uri, "flux-test",
                            stack.home / "mlflow" / "artifacts") == experiment_id
