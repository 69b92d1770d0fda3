"""MLflow with a database backend store (the embedded Postgres by default) and artifacts under FLUX_HOME."""

from __future__ import annotations

from pathlib import Path


def configure_mlflow(tracking_uri: str, experiment: str, artifact_root: Path) -> str:
    """Point MLflow at the store and make sure the experiment exists; returns the experiment id."""
    import mlflow

    mlflow.set_tracking_uri(tracking_uri)
    existing = mlflow.get_experiment_by_name(experiment)
    if existing is not None:
        mlflow.set_experiment(experiment)
        return str(existing.experiment_id)
    artifact_root.mkdir(parents=True, exist_ok=True)
    experiment_id = mlflow.create_experiment(experiment, artifact_location=artifact_root.resolve().as_uri())
    mlflow.set_experiment(experiment)
    return str(experiment_id)
