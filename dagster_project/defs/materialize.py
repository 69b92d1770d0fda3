"""Materialize a selection of assets into the configured Dagster instance: through the code location (`flux
materialize`, `make run`: launch.py) or in this process (`flux materialize --in-process`, the tests, restore)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dagster as dg
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetGraph
from dagster._core.events import DagsterEventType
from dagster._core.storage.tags import PARTITION_NAME_TAG

from dagster_project.core.run_settings import check_stack_settings, setting_tags
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.launch import (
    StepListener,
    code_location,
    create_asset_run,
    published_settings,
    submit,
    wait_for_run,
)
from dagster_project.defs.pull_settings import PullSettingsError, check_pull_settings
from dagster_project.defs.run_tags import command_tags
from dagster_project.ops.instance import render_dagster_home


class RunSettingsError(ValueError):
    """Settings a run would fail on at its first step (a live pull without a contact address, a raw root that
    cannot be written): refused before the run exists."""


class SelectionError(ValueError):
    """A selection that is not valid, or that names no asset (an empty asset list would run every asset)."""


@dataclass(frozen=True)
class MaterializeOutcome:
    run_id: str
    success: bool
    materialized: list[str]
    checks_passed: int
    checks_total: int
    submitted: str = "in-process"  # or "launched" (by the run launcher), "queued" (for the daemon)


def launch_selection(
    settings: FluxSettings,
    selection: str = "*",
    trigger: str = "cli",
    on_step: StepListener | None = None,
    partition: str | None = None,
) -> MaterializeOutcome:
    """Run `selection` (one `partition` of it, for partitioned assets) through the Flux code location, into the
    instance under its DAGSTER_HOME; waits for the run to finish. The run carries the settings of `settings` that
    differ from the location's; one it cannot carry (a connection, a secret) is refused before any run exists."""
    with (
        dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance,
        code_location(instance, settings) as (workspace, location),
    ):
        repository = next(iter(location.get_repositories().values()))
        keys = selected_keys(repository.asset_graph, selection, partition)
        loaded_with = published_settings(location)
        check_stack_settings(settings, loaded_with)
        check_run_settings(settings, repository.asset_graph, keys)
        tags = command_tags(settings, trigger) | setting_tags(settings, loaded_with)
        if partition is not None:
            check_partition(instance, repository.asset_graph, keys, partition)
            tags = {**tags, PARTITION_NAME_TAG: partition}
        run = create_asset_run(instance, location, keys, tags)
        submitted = submit(instance, workspace, run)
        finished = wait_for_run(instance, run.run_id, on_step)
        return _outcome(instance, finished, submitted)


def materialize_selection(
    settings: FluxSettings, selection: str = "*", trigger: str = "in-process", partition: str | None = None
) -> MaterializeOutcome:
    """Run `selection` (one `partition` of it, for partitioned assets) in this process with the Definitions built
    from `settings` (which may differ from the environment), into the instance under its DAGSTER_HOME."""
    from dagster_project.defs.definitions import build_definitions

    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def()
    graph = defs.resolve_asset_graph()
    asset_keys = selected_keys(graph, selection, partition)
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        if partition is not None:
            check_partition(instance, graph, asset_keys, partition)
        result = job.execute_in_process(
            instance=instance,
            partition_key=partition,
            asset_selection=list(asset_keys),
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
            tags=command_tags(settings, trigger),
        )
        checks = result.get_asset_check_evaluations()
        return MaterializeOutcome(
            run_id=result.run_id,
            success=result.success,
            materialized=sorted(e.asset_key.to_user_string() for e in result.get_asset_materialization_events()),
            checks_passed=sum(1 for c in checks if c.passed),
            checks_total=len(checks),
        )


def check_run_settings(settings: FluxSettings, graph: BaseAssetGraph[Any], keys: set[dg.AssetKey]) -> None:
    """What the selected raw pulls need from the command's settings, checked before the run is created (a snapshot
    pull names its own missing files: a selection may pull one source of an incomplete snapshot)."""
    from dagster_project.defs.assets.raw_pulls import RAW_GROUP

    if not any(graph.get(key).group_name == RAW_GROUP for key in keys):
        return
    try:
        check_pull_settings(settings, snapshot_files=False)
    except PullSettingsError as exc:
        raise RunSettingsError(str(exc)) from None


def _outcome(instance: dg.DagsterInstance, run: dg.DagsterRun, submitted: str) -> MaterializeOutcome:
    materialized = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    checks = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records
    passed = [r.event_log_entry.dagster_event.event_specific_data.passed for r in checks]  # type: ignore[union-attr]
    return MaterializeOutcome(
        run_id=run.run_id,
        success=run.status is dg.DagsterRunStatus.SUCCESS,
        materialized=sorted({r.asset_key.to_user_string() for r in materialized if r.asset_key}),
        checks_passed=sum(passed),
        checks_total=len(passed),
        submitted=submitted,
    )


def selected_keys(graph: BaseAssetGraph, selection: str, partition: str | None = None) -> set[dg.AssetKey]:
    """The executable assets a selection string names in `graph` (the location's or this process's) that one run
    can hold: with `partition`, the partitioned ones; without, the rest."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # selection strings are stable enough for a CLI
        try:
            resolved = dg.AssetSelection.from_string(selection).resolve(graph)
        except dg.DagsterError as exc:  # a syntax error, or a key no asset supplies
            raise SelectionError(f"{selection!r} is not a valid asset selection: {str(exc).split('. ')[0]}") from None
    # Keep only executable assets: a spec without a computation cannot be in a run.
    keys = {k for k in resolved if graph.get(k).is_executable}
    if not keys:
        groups = sorted({graph.get(k).group_name for k in graph.executable_asset_keys})
        raise SelectionError(f"{selection!r} selects no asset (groups: {', '.join(groups)})")
    return _by_partition(graph, selection, keys, partition)


def _by_partition(
    graph: BaseAssetGraph, selection: str, keys: set[dg.AssetKey], partition: str | None
) -> set[dg.AssetKey]:
    """A run is of one partition of assets sharing one partitioning, or of unpartitioned assets only: without a
    partition the release-history assets are left out (each release is its own run)."""
    partitioned = {k for k in keys if graph.get(k).partitions_def is not None}
    names = ", ".join(sorted(k.to_user_string() for k in partitioned))
    if partition is None:
        if keys == partitioned:
            raise SelectionError(
                f"{selection!r} selects only partitioned assets ({names}): name one release with "
                "--partition (`flux releases list` shows the keys)"
            )
        return keys - partitioned
    if keys != partitioned:
        raise SelectionError(
            f"--partition applies to partitioned assets only; {selection!r} also selects "
            f"{len(keys - partitioned)} unpartitioned asset(s)"
        )
    if len({graph.get(k).partitions_def for k in keys}) > 1:
        raise SelectionError(
            f"{selection!r} selects assets partitioned by different sources' releases ({names}): select one source's"
        )
    return keys


def check_partition(
    instance: dg.DagsterInstance, graph: BaseAssetGraph, keys: set[dg.AssetKey], partition: str
) -> None:
    """A partition key the assets' partitioning does not hold is refused before any run is created."""
    partitions_def = graph.get(next(iter(keys))).partitions_def
    assert partitions_def is not None
    held = partitions_def.get_partition_keys(dynamic_partitions_store=instance)
    if partition not in held:
        listed = ", ".join(repr(k) for k in held[-5:]) or "none yet (materialize the `<source>_release` asset)"
        raise SelectionError(
            f"no partition {partition!r} of {', '.join(sorted(k.to_user_string() for k in keys))};"
            f" partitions held: {listed}"
        )


def graph_reprojector(settings: FluxSettings) -> Callable[[str], str | None]:
    """What `restore` calls to re-project the graph: an in-process run of a selection; None, or why it failed."""

    def reproject(selection: str) -> str | None:
        outcome = materialize_selection(settings, selection)
        return None if outcome.success else f"Dagster run {outcome.run_id}"

    return reproject
