"""MLflow with a database backend store (the embedded Postgres by default) and artifacts under FLUX_HOME."""

from pathlib import Path

import dagster as dg

from dagster_project.settings import FluxSettings


def configure_mlflow(tracking_uri: str, experiment: str, artifact_root: Path) -> str:
    """Point MLflow at the store and make sure the experiment exists; returns the experiment id."""
    import mlflow

    mlflow.set_tracking_uri(tracking_uri)
    existing = mlflow.get_experiment_by_name(experiment)
    if existing is not None:
        mlflow.set_experiment(experiment)
        return existing.experiment_id
    artifact_root.mkdir(parents=True, exist_ok=True)
    experiment_id = mlflow.create_experiment(experiment, artifact_location=artifact_root.resolve().as_uri())
    mlflow.set_experiment(experiment)
    return experiment_id


class MLflowResource(dg.ConfigurableResource):
    """MLflow at FLUX_MLFLOW_TRACKING_URI (or the embedded database), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def configure(self) -> str:
        settings = self.settings
        return configure_mlflow(settings.resolved_mlflow_tracking_uri, settings.mlflow_experiment,
                                settings.home / "mlflow" / "artifacts")
