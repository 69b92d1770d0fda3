"""The settings as a resource: assets, checks and sensors take a parameter `settings: FluxSettingsParam` and
receive the FluxSettings the Definitions were built from (definitions.py), never a copy read elsewhere; inside a
run, with the run settings its tags carry (core/run_settings.py), so a run reads what its command said."""

import dagster as dg

from dagster_project.core.run_settings import settings_for_run
from dagster_project.core.settings import FluxSettings

FluxSettingsParam = dg.ResourceParam[FluxSettings]


def run_settings_resource(settings: FluxSettings) -> dg.ResourceDefinition:
    def for_this_run(context: dg.InitResourceContext) -> FluxSettings:
        run = context.dagster_run
        return settings_for_run(settings, run.tags) if run is not None else settings

    return dg.ResourceDefinition(
        resource_fn=for_this_run,
        description="Flux's FLUX_ settings: the code location's, with the run settings the run's tags carry.",
    )
