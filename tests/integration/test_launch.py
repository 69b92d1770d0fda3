"""Runs submitted through the Flux code location (`flux materialize` and `make run`): the run has the location's
origin (the Overview timeline lists it, and the UI re-executes it against the same job snapshot), carries what
started it, and reports its steps as they finish. A location that does not load or a selection that names nothing
creates no run."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.definitions.selector import JobSubsetSelector

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.launch import ASSET_JOB, CodeLocationError, StepEvent, code_location
from dagster_project.defs.materialize import SelectionError, launch_selection
from dagster_project.ops.instance import LOCATION_NAME, render_dagster_home

PLATFORM = {"postgres_schema", "neo4j_schema"}  # migrations: quick, and idempotent on the session's databases


def _instance(settings: FluxSettings) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_config(render_dagster_home(settings))


def test_a_launched_run_belongs_to_the_code_location_and_says_what_started_it(stack: FluxSettings) -> None:
    steps: list[StepEvent] = []
    outcome = launch_selection(stack, "group:platform", trigger="test", on_step=steps.append)
    assert outcome.success and outcome.submitted == "launched", outcome
    assert set(outcome.materialized) == PLATFORM
    started = {step.step_key for step in steps if step.status == "started"}
    succeeded = {step.step_key for step in steps if step.status == "succeeded"}
    assert started == succeeded >= PLATFORM and len(steps) == 2 * len(started)
    with _instance(stack) as instance:
        run = instance.get_run_by_id(outcome.run_id)
        assert run is not None and run.remote_job_origin is not None
        assert run.remote_job_origin.location_name == LOCATION_NAME
        assert run.tags["flux/trigger"] == "test"
        assert run.tags["flux/source_mode"] == stack.sources.source_mode
        assert run.tags["flux/raw_root"] == stack.raw_root_path
        assert run.asset_selection == {dg.AssetKey(key) for key in PLATFORM}
        assert set(run.step_keys_to_execute or ()) == started  # its checks' steps too
        with code_location(instance) as (_, location):
            repository = next(iter(location.get_repositories().values()))
            subset = location.get_job(
                JobSubsetSelector(
                    location_name=LOCATION_NAME,
                    repository_name=repository.name,
                    job_name=ASSET_JOB,
                    op_selection=None,
                    asset_selection=run.asset_selection,
                    asset_check_selection=run.asset_check_selection,
                )
            )
        # A later load of the location (the UI's, the daemon's) holds the run's job at the same version: the UI
        # re-executes it without "may be a different version".
        assert run.job_snapshot_id == subset.identifying_job_snapshot_id


def test_a_selection_that_names_nothing_creates_no_run(stack: FluxSettings) -> None:
    with _instance(stack) as instance:
        before = instance.get_runs_count()
    with pytest.raises(SelectionError, match="'group:nope' selects no asset"):
        launch_selection(stack, "group:nope", trigger="test")
    with _instance(stack) as instance:
        assert instance.get_runs_count() == before


def test_a_code_location_that_does_not_load_is_one_clear_error_and_no_run(
    stack: FluxSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLUX_NIGHTLY_CRON", "every night")  # the code server reads the same environment
    with _instance(stack) as instance:
        before = instance.get_runs_count()
    with pytest.raises(CodeLocationError) as failed:
        launch_selection(stack, "group:platform", trigger="test")
    assert "the Flux code location did not load" in str(failed.value)
    assert "FLUX_NIGHTLY_CRON" in str(failed.value), str(failed.value)
    assert "FluxConfigError: not a valid cron expression: 'every night'" in str(failed.value)
    assert "\n" not in str(failed.value)
    with _instance(stack) as instance:
        assert instance.get_runs_count() == before


def test_a_partition_run_through_the_location_names_its_release_and_fails_clearly_when_it_is_gone(
    stack: FluxSettings,
) -> None:
    """A release partition launched as the UI's backfill launches it: the run carries the partition; a release
    the raw zone does not hold fails its one step with the reason, and no materialization is recorded."""
    gone = "Flux demo (HGNC complete-set format) #00000000"
    with _instance(stack) as instance:
        instance.add_dynamic_partitions("hgnc_releases", [gone])
    try:
        with pytest.raises(SelectionError, match="--partition"):
            launch_selection(stack, "key:hgnc_release_history or group:platform", trigger="test", partition=gone)
        outcome = launch_selection(stack, "hgnc_release_history", trigger="test", partition=gone)
        assert not outcome.success and outcome.materialized == []
        with _instance(stack) as instance:
            run = instance.get_run_by_id(outcome.run_id)
            assert run is not None and run.tags["dagster/partition"] == gone
            failures = instance.get_records_for_run(outcome.run_id, of_type=dg.DagsterEventType.STEP_FAILURE).records
            assert len(failures) == 1
            assert "no longer in the raw zone" in str(failures[0].event_log_entry.dagster_event.event_specific_data)
    finally:
        with _instance(stack) as instance:
            instance.delete_dynamic_partition("hgnc_releases", gone)
