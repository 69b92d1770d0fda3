"""`flux_check`: Dagster's `@asset_check`, with the check's step output named after the check.

`@asset_check` names every check's output "result", and Dagster orders the blocking checks in front of an asset by
output name alone, so with two blocking checks on one asset their order (and the job's snapshot id) changed from one
load of the code location to the next: the UI then warned that each run's job "may be a different version". A
one-spec `@multi_asset_check` names the output after the asset and the check; the step key stays the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg


def flux_check(
    *, asset: dg.AssetsDefinition, description: str, name: str | None = None, blocking: bool = False
) -> Callable[[Callable[..., Any]], dg.AssetChecksDefinition]:
    def decorate(fn: Callable[..., Any]) -> dg.AssetChecksDefinition:
        spec = dg.AssetCheckSpec(name or fn.__name__, asset=asset, blocking=blocking, description=description)
        step = f"{asset.key.to_python_identifier()}_{spec.name}"  # what @asset_check names the step
        return dg.multi_asset_check(specs=[spec], name=step, description=description)(fn)

    return decorate
