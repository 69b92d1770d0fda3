"""What an asset's previous materialization recorded: the metadata a stage compares its inputs against to decide
that it has nothing to do (the graph load, the resolution)."""

from typing import Any

import dagster as dg


def previous_metadata(context: dg.AssetExecutionContext) -> dict[str, Any]:
    """The latest materialization's metadata of this step's asset as plain values; {} when there is none."""
    event = context.instance.get_latest_materialization_event(context.asset_key)
    if event is None or event.asset_materialization is None:
        return {}
    return {key: value.value for key, value in event.asset_materialization.metadata.items()}
