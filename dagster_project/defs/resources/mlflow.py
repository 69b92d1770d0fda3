"""MLflow with a database backend store (the embedded Postgres by default) and artifacts under FLUX_HOME."""

import dagster as dg

from dagster_project.core.experiments import configure_mlflow
from dagster_project.core.settings import FluxSettings


class MLflowResource(dg.ConfigurableResource):
    """MLflow at FLUX_MLFLOW_TRACKING_URI (or the embedded database), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def configure(self) -> str:
        settings = self.settings
        return configure_mlflow(
            settings.resolved_mlflow_tracking_uri,
            settings.ops.mlflow_experiment,
            settings.home / "mlflow" / "artifacts",
        )
