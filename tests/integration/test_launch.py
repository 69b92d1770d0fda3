"""Runs submitted through the Flux code location (`flux materialize` and `make run`), served by the stack's one code
server: the run has the location's origin (the Overview timeline lists it, and the UI re-executes it against the
same job snapshot), carries what started it and the settings its command gave, and reports its steps as they
finish. A location that does not load, a selection that names nothing, or a command whose connections are not the
location's creates no run; the server reloads when the code changed."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.remote_origin import GrpcServerCodeLocationOrigin

from dagster_project.core.run_settings import StackSettingsMismatch
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.launch import ASSET_JOB, CodeLocationError, StepEvent, code_location
from dagster_project.defs.materialize import SelectionError, launch_selection
from dagster_project.ops.instance import LOCATION_NAME, render_dagster_home
from dagster_project.sources.raw import latest_manifest
from dagster_project.stack.code_server import CodeServerService, code_fingerprint

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


def test_a_code_location_that_does_not_load_is_one_clear_error_and_no_run(stack: FluxSettings, tmp_path: Path) -> None:
    """A code server of its own home whose settings break the location's load (the cron the schedule is built
    from): the server runs and serves the error, and a command gets it in one line before any run exists."""
    broken = stack.evolve(home=tmp_path / "home", nightly_cron="every night")
    server = CodeServerService(broken)
    server.start()
    try:
        with _instance(stack) as instance:
            before = instance.get_runs_count()
        with pytest.raises(CodeLocationError) as failed:
            launch_selection(broken, "group:platform", trigger="test")
    finally:
        server.stop()
    assert "the Flux code location did not load" in str(failed.value)
    assert "FLUX_NIGHTLY_CRON" in str(failed.value), str(failed.value)
    assert "FluxConfigError: not a valid cron expression: 'every night'" in str(failed.value)
    assert "\n" not in str(failed.value)
    with _instance(stack) as instance:
        assert instance.get_runs_count() == before
    assert not server.socket.exists() and server.pidfile.live_pid() is None


def test_a_launched_run_reads_the_settings_its_command_gave_not_the_code_server_s(
    stack: FluxSettings, tmp_path: Path
) -> None:
    """The stack's code server was started with the session's raw root; the command names another. The run's
    worker (started by that code server, with its environment) pulls into the command's, and the run says so."""
    command = stack.evolve(raw_root=str(tmp_path / "raw"))
    steps: list[StepEvent] = []
    # The pull records itself in the platform tables: the migrations run first in any test order.
    outcome = launch_selection(command, "key:postgres_schema or key:hgnc_raw", trigger="test", on_step=steps.append)
    assert outcome.success and outcome.materialized == ["hgnc_raw", "postgres_schema"], (outcome, steps)
    assert latest_manifest("hgnc", command.raw_root_path) is not None
    with _instance(stack) as instance:
        run = instance.get_run_by_id(outcome.run_id)
    assert run is not None and run.remote_job_origin is not None
    origin = run.remote_job_origin.repository_origin.code_location_origin
    assert isinstance(origin, GrpcServerCodeLocationOrigin) and origin.socket == str(CodeServerService(stack).socket)
    assert run.tags["flux/setting/FLUX_RAW_ROOT"] == json.dumps(command.raw_root_path)
    assert run.tags["flux/raw_root"] == command.raw_root_path
    assert not any(tag.startswith("flux/setting/FLUX_PG") for tag in run.tags)


def test_a_command_whose_connections_differ_from_the_code_server_s_creates_no_run(stack: FluxSettings) -> None:
    with _instance(stack) as instance:
        before = instance.get_runs_count()
    with pytest.raises(StackSettingsMismatch) as refused:
        launch_selection(stack.evolve(pg_database="elsewhere", llm_api_key="sk-test"), "group:platform")
    message = str(refused.value)
    assert "FLUX_DATABASE_URL" in message and "/elsewhere" in message and f"/{stack.postgres.pg_database}" in message
    assert "FLUX_LLM_API_KEY" in message and "sk-test" not in message and "make down && make up" in message
    with _instance(stack) as instance:
        assert instance.get_runs_count() == before


def test_the_stack_s_code_server_reloads_when_the_code_changed_since_it_loaded(stack: FluxSettings) -> None:
    server = CodeServerService(stack)
    assert server.is_running()
    loaded = server.fingerprint_file.read_text()
    before = server._client().get_server_id()
    with _instance(stack) as instance, code_location(instance, stack):
        assert server._client().get_server_id() == before  # the code did not change: no reload
    server.fingerprint_file.write_text("a version of the code that is gone")
    with _instance(stack) as instance, code_location(instance, stack) as (_, location):
        assert location.get_repositories()
    assert server._client().get_server_id() != before
    assert server.fingerprint_file.read_text() == loaded == code_fingerprint()


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
