"""The settings as a resource: assets, checks and sensors take a parameter `settings: FluxSettingsParam` and
receive the one FluxSettings the Definitions were built from (definitions.py), never a copy read elsewhere."""

import dagster as dg

from dagster_project.core.settings import FluxSettings

FluxSettingsParam = dg.ResourceParam[FluxSettings]
