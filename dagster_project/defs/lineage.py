"""Which pulls an instance's lineage is of: the source mode and raw root its runs read. The first `flux materialize`
records them in the instance; a later one with another mode or raw root would put other data's materializations on
the same assets (the UI would call the served ones stale, the automation would carry the other data downstream), so
it is refused unless it says it means to start a new lineage there. A run of the code location reads the command's
source mode and raw root (they travel with it as run settings); what is recorded is what the run's raw pulls say
they read (their materializations' `mode` and `raw_root`), so a run that pulled nothing changes no lineage."""

from __future__ import annotations

import json
from dataclasses import dataclass

import dagster as dg
from dagster._core.events import DagsterEventType

from dagster_project.core.settings import FluxSettings

LINEAGE_KEY = "flux/lineage"
# The metadata a raw pull's materialization records (assets/raw_pulls.py): the lineage of what it read.
MODE_METADATA = "mode"
RAW_ROOT_METADATA = "raw_root"


@dataclass(frozen=True)
class Lineage:
    source_mode: str
    raw_root: str

    def describe(self) -> str:
        return f"{self.source_mode} pulls under {self.raw_root}"


class LineageMismatchError(RuntimeError):
    """A run whose source mode or raw root differs from the lineage the instance holds."""


def lineage_of(settings: FluxSettings) -> Lineage:
    return Lineage(settings.sources.source_mode, settings.raw_root_path)


def pulled_lineage(instance: dg.DagsterInstance, run_id: str) -> Lineage | None:
    """The lineage of what a run's raw pulls read, from their materializations; None when it pulled nothing. Pulls
    of one run share its settings, so they name one lineage; more than one is an error, never a guess."""
    records = instance.get_records_for_run(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    pulled: set[Lineage] = set()
    for record in records:
        materialization = record.asset_materialization
        metadata = materialization.metadata if materialization is not None else {}
        mode, root = metadata.get(MODE_METADATA), metadata.get(RAW_ROOT_METADATA)
        if mode is not None and root is not None:
            pulled.add(Lineage(str(mode.value), str(root.value)))
    if len(pulled) > 1:
        raise LineageMismatchError(
            f"run {run_id} pulled from more than one lineage: {', '.join(sorted(p.describe() for p in pulled))}"
        )
    return next(iter(pulled), None)


def recorded_lineage(instance: dg.DagsterInstance) -> Lineage | None:
    stored = instance.run_storage.get_cursor_values({LINEAGE_KEY}).get(LINEAGE_KEY)
    try:
        return Lineage(**json.loads(stored)) if stored else None
    except (ValueError, TypeError):  # written by another version: the next run records it again
        return None


def record_lineage(instance: dg.DagsterInstance, lineage: Lineage) -> None:
    instance.run_storage.set_cursor_values({LINEAGE_KEY: json.dumps(lineage.__dict__, sort_keys=True)})


def check_lineage(instance: dg.DagsterInstance, settings: FluxSettings, new_lineage: bool = False) -> Lineage:
    """The lineage a run of `settings` belongs to: the instance's when it holds none (or `new_lineage` says to
    replace it) or the same; a different one is refused, naming both and the ways out. Nothing is recorded until
    `record_lineage`, once the run exists: a command refused later leaves the instance's lineage as it was."""
    wanted = lineage_of(settings)
    held = recorded_lineage(instance)
    if held is None or new_lineage or held == wanted:
        return wanted
    raise LineageMismatchError(
        f"this Dagster instance ({settings.dagster_home}) holds the lineage of {held.describe()}; this run would "
        f"read {wanted.describe()} and record its materializations over it. Give it a FLUX_HOME of its own "
        "(its own instance and databases), set FLUX_SOURCE_MODE / FLUX_RAW_ROOT back, or pass --new-lineage to "
        "make it this instance's lineage from now on"
    )
