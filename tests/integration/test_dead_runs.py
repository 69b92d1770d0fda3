"""A run whose process was killed is marked failed by the next `flux materialize` (its dbt target folders removed)
and by the daemon's run monitoring; a run whose process is alive, that is being launched, or that another machine
executes, is left alone. Real processes (a job run in a child Python process, killed with SIGKILL) against the
session's Postgres-backed Dagster instance."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events import EngineEventData
from dagster._daemon.monitoring.run_monitoring import monitor_started_run

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.dead_runs import PID_REUSE_SLACK_S, mark_dead_runs_failed, run_pid
from dagster_project.defs.run_tags import HOST_TAG
from dagster_project.ops.instance import render_dagster_home

# A job whose one op sleeps: its run stays STARTED while the child process lives.
CHILD = textwrap.dedent(
    """
    import sys, time
    import dagster as dg

    @dg.op
    def wait() -> None:
        time.sleep(600)

    @dg.job
    def sleeper() -> None:
        wait()

    with dg.DagsterInstance.from_config(sys.argv[1]) as instance:
        sleeper.execute_in_process(instance=instance, tags={"flux/trigger": "test", **dict([sys.argv[2:4]])})
    """
)


def _start_run(instance: dg.DagsterInstance, dagster_home: str, host: str) -> tuple[subprocess.Popen[bytes], str]:
    before = {r.run_id for r in instance.get_runs()}
    child = subprocess.Popen([sys.executable, "-c", CHILD, dagster_home, HOST_TAG, host])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for run in instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])):
            if run.run_id not in before and run_pid(instance, run.run_id) == child.pid:
                return child, run.run_id
        assert child.poll() is None, "the child process ended before its run started"
        time.sleep(0.2)
    child.kill()
    raise AssertionError("the child's run never reached STARTED with its pid recorded")


@pytest.fixture
def instance(stack: FluxSettings) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.from_config(render_dagster_home(stack)) as instance:
        yield instance


def test_a_killed_run_is_marked_failed_once_and_a_live_one_is_left_running(
    stack: FluxSettings, instance: dg.DagsterInstance
) -> None:
    home = render_dagster_home(stack)
    killed, killed_id = _start_run(instance, home, socket.gethostname())
    alive, alive_id = _start_run(instance, home, socket.gethostname())
    elsewhere, elsewhere_id = _start_run(instance, home, "another-machine")
    target = stack.home / "dbt" / "target" / f"{killed_id[:8]}-0a1b2c3d"
    target.mkdir(parents=True)
    (target / "dbt.log").write_text("the run's dbt log\n")
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        elsewhere.kill()  # gone too, but its run belongs to another machine's Flux
        elsewhere.wait(timeout=30)
        assert instance.get_run_by_id(killed_id).status is dg.DagsterRunStatus.STARTED  # what Dagster leaves

        dead = mark_dead_runs_failed(instance, stack.home)

        assert [(d.run_id, d.pid, d.removed_folders) for d in dead] == [(killed_id, killed.pid, 1)]
        assert instance.get_run_by_id(killed_id).status is dg.DagsterRunStatus.FAILURE
        assert not target.exists()
        failure = instance.get_records_for_run(killed_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
        assert len(failure) == 1 and f"pid {killed.pid}" in (failure[0].event_log_entry.dagster_event.message or "")
        assert instance.get_run_by_id(alive_id).status is dg.DagsterRunStatus.STARTED
        assert instance.get_run_by_id(elsewhere_id).status is dg.DagsterRunStatus.STARTED

        assert mark_dead_runs_failed(instance, stack.home) == []  # a second look changes nothing
        assert len(instance.get_records_for_run(killed_id, of_type=dg.DagsterEventType.RUN_FAILURE).records) == 1
    finally:
        for child in (killed, alive, elsewhere):
            child.kill()
            child.wait(timeout=30)
        for run_id in (alive_id, elsewhere_id):  # leave no run STARTED for the tests after this one
            run = instance.get_run_by_id(run_id)
            if run is not None and not run.is_finished:
                instance.report_run_failed(run, message="ended by the test")


def test_flux_materialize_reports_the_dead_run_it_marks(stack: FluxSettings, instance: dg.DagsterInstance) -> None:
    killed, killed_id = _start_run(instance, render_dagster_home(stack), socket.gethostname())
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    flux = Path(sys.executable).with_name("flux")
    env = {**os.environ, "FLUX_HOME": str(stack.home)}
    out = subprocess.run(
        [str(flux), "materialize", "--select", "postgres_schema"], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert f"run {killed_id} marked failed: its process (pid {killed.pid}) is gone" in out.stderr
    assert instance.get_run_by_id(killed_id).status is dg.DagsterRunStatus.FAILURE


def test_a_run_being_launched_is_never_failed_by_the_sweep(stack: FluxSettings, instance: dg.DagsterInstance) -> None:
    """The race of a sweep and a launch: a queued run was dequeued late, its worker (younger than the run) has
    recorded its pid but not yet reported the run started. The sweep leaves it alone, though the process started
    well after the run was created; Dagster's run monitoring (dagster.yaml) fails it if it never starts."""

    @dg.op
    def nothing() -> None: ...

    @dg.job
    def launched_late() -> None:
        nothing()

    run = instance.create_run_for_job(
        launched_late, status=dg.DagsterRunStatus.STARTING, tags={HOST_TAG: socket.gethostname()}
    )
    time.sleep(2 * PID_REUSE_SLACK_S + 1)  # dequeued well after the run was created (past the pid-reuse slack)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        instance.report_engine_event(
            "Started process for run", run, EngineEventData(metadata={"pid": dg.MetadataValue.text(str(worker.pid))})
        )
        assert run_pid(instance, run.run_id) == worker.pid
        assert mark_dead_runs_failed(instance, stack.home) == []
        assert instance.get_run_by_id(run.run_id).status is dg.DagsterRunStatus.STARTING
    finally:
        worker.kill()
        worker.wait(timeout=30)
        instance.report_run_failed(instance.get_run_by_id(run.run_id), message="ended by the test")


def test_the_daemon_s_run_monitoring_fails_a_killed_run_with_no_command_run(
    stack: FluxSettings, instance: dg.DagsterInstance
) -> None:
    """What the daemon's run monitoring does every 30 s (dagster.yaml), called here as the daemon calls it: Dagster's
    own monitor asks the instance's launcher (defs/run_launcher.py) whether each started run's worker lives. The
    killed run is failed with its pid named; the live one is left running."""
    home = render_dagster_home(stack)
    killed, killed_id = _start_run(instance, home, socket.gethostname())
    alive, alive_id = _start_run(instance, home, socket.gethostname())
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        for run_id in (killed_id, alive_id):
            (record,) = instance.get_run_records(dg.RunsFilter(run_ids=[run_id]))
            monitor_started_run(instance, None, record, logging.getLogger("run-monitoring"))  # type: ignore[arg-type]
        assert instance.get_run_by_id(killed_id).status is dg.DagsterRunStatus.FAILURE
        failure = instance.get_records_for_run(killed_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
        assert f"pid {killed.pid}" in str(failure[0].event_log_entry.dagster_event.message)
        assert instance.get_run_by_id(alive_id).status is dg.DagsterRunStatus.STARTED
    finally:
        for child in (killed, alive):
            child.kill()
            child.wait(timeout=30)
        run = instance.get_run_by_id(alive_id)
        if run is not None and not run.is_finished:
            instance.report_run_failed(run, message="ended by the test")
