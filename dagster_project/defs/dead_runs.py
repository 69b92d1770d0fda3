"""Runs whose process is gone (killed, the machine restarted) are marked failed, and their dbt target folders removed.

Dagster's own run monitoring cannot see them: the default run launcher has no worker health check, and a run
executed in the `flux` process (`--in-process`, restore) was never launched at all, so a killed one stays STARTED
for ever and the UI shows it running. Every run records the process that executes its steps (the executor's
engine event carries its pid); `flux materialize` and `flux stack up` look each in-flight run's process up on this
machine and report the runs whose process no longer exists as failed; a run not yet reported started is never
judged by a pid (the daemon's run monitoring fails one that does not start in time). Runs started on another host
(their `flux/host` tag) and runs of a launcher that monitors its own workers (Kubernetes, Docker) are left to that
launcher.
"""

from __future__ import annotations

import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import psutil
from dagster._core.launcher import DefaultRunLauncher
from dagster._core.storage.dagster_run import RunRecord

from dagster_project.defs.run_tags import HOST_TAG

IN_FLIGHT = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
# A process started this long after its run is another one that reused the pid.
PID_REUSE_SLACK_S = 2.0


@dataclass(frozen=True)
class DeadRun:
    run_id: str
    pid: int
    removed_folders: int


def run_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of the process that executes the run's steps: the latest engine event that names one."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, ascending=False)
    for record in records.records:
        event = record.event_log_entry.dagster_event
        metadata = getattr(event.event_specific_data, "metadata", None) or {} if event else {}
        pid = metadata.get("pid")
        if pid is not None and str(pid.value).isdigit():
            return int(pid.value)
    return None


def process_gone(pid: int, run_started_at: float) -> bool:
    """No such process, a zombie, or a process started after the run did (the pid was reused)."""
    try:
        process = psutil.Process(pid)
        return process.status() == psutil.STATUS_ZOMBIE or process.create_time() > run_started_at + PID_REUSE_SLACK_S
    except psutil.NoSuchProcess:
        return True


def gone_worker(instance: dg.DagsterInstance, record: RunRecord) -> int | None:
    """The pid of the run's process when that process is gone; None while it lives, or when nothing here can judge
    it: a run of another machine (its `flux/host` tag), one not yet reported started (its worker may be younger
    than the run: a queued run's worker starts when it is dequeued), or one whose process never recorded its pid."""
    if record.dagster_run.tags.get(HOST_TAG, socket.gethostname()) != socket.gethostname():
        return None
    if record.start_time is None:
        return None
    pid = run_pid(instance, record.dagster_run.run_id)
    return pid if pid is not None and process_gone(pid, record.start_time) else None


def mark_dead_runs_failed(instance: dg.DagsterInstance, flux_home: Path) -> list[DeadRun]:
    """Report each in-flight run of this machine whose process is gone as failed; remove its dbt target folders."""
    if not isinstance(instance.run_launcher, DefaultRunLauncher):
        return []
    dead: list[DeadRun] = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=IN_FLIGHT)):
        run = record.dagster_run
        pid = gone_worker(instance, record)
        if pid is None:
            continue
        instance.report_run_failed(
            run, message=f"the run's process (pid {pid}) is gone: it was killed or its machine restarted"
        )
        dead.append(DeadRun(run.run_id, pid, remove_dbt_targets(flux_home, run.run_id)))
    return dead


def remove_dbt_targets(flux_home: Path, run_id: str) -> int:
    """The run's dbt target folders (`<run id[:8]>-<invocation>` under FLUX_HOME/dbt/target: resources/dbt.py)."""
    folders = list((flux_home / "dbt" / "target").glob(f"{run_id[:8]}-*"))
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(folders)
