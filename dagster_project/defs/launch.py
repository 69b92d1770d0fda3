"""Runs submitted through the Flux code location, as the Dagster UI and the daemon submit them.

The location is read from the stack's code server when one runs (the one the daemon and the UI read), else from a
code server of the command's own. The run is created from the location's remote job (so it has a repository
origin: the Overview timeline shows it and the UI re-executes it without a version warning), tagged with what
started it and the settings it carries, and handed to the instance's run coordinator when a daemon is there to
dequeue it, otherwise straight to the run launcher. The caller waits for the run and gets its steps as they finish.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.events import DagsterEventType
from dagster._core.remote_representation.code_location import CodeLocation
from dagster._core.workspace.context import BaseWorkspaceRequestContext, WorkspaceProcessContext
from dagster._core.workspace.load_target import GrpcServerTarget, ModuleTarget
from dagster._daemon.controller import get_daemon_statuses
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon
from dagster._utils.error import SerializableErrorInfo

from dagster_project.core.run_settings import LOCATION_SETTINGS_KEY
from dagster_project.core.settings import FluxSettings
from dagster_project.ops.instance import DEFINITIONS_MODULE, LOCATION_NAME
from dagster_project.stack.code_server import CodeServerService

ASSET_JOB = "__ASSET_JOB"
# A daemon whose queue heartbeat is older than this is taken for gone: the run goes to the launcher instead of
# waiting in a queue that nothing reads.
DAEMON_HEARTBEAT_TOLERANCE_S = 90.0
POLL_S = 0.5
# The run worker writes to this command's terminal: warnings and errors only there (the progress line says the
# rest); every event is in the run's log in the UI.
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
STEP_EVENTS = {
    DagsterEventType.STEP_START,
    DagsterEventType.STEP_SUCCESS,
    DagsterEventType.STEP_FAILURE,
    DagsterEventType.STEP_SKIPPED,
    DagsterEventType.RUN_FAILURE,
    DagsterEventType.ENGINE_EVENT,
}


class CodeLocationError(RuntimeError):
    """The code location did not load: the run was never created."""


class RunNotDequeued(RuntimeError):
    """A queued run that no daemon is left to start (it stays queued until one runs)."""


@dataclass(frozen=True)
class StepEvent:
    """One step of a launched run that started or ended (`status`: started, succeeded, failed, skipped)."""

    step_key: str
    status: str
    message: str = ""


StepListener = Callable[[StepEvent], None]


@contextmanager
def code_location(
    instance: dg.DagsterInstance, settings: FluxSettings | None = None
) -> Iterator[tuple[BaseWorkspaceRequestContext, CodeLocation]]:
    """The Flux location: from the stack's code server when it runs (reloaded first if the code changed since it
    loaded), else served by a code server of this command's own (as `dagster dev` serves it)."""
    server = CodeServerService(settings) if settings is not None else None
    target: GrpcServerTarget | ModuleTarget
    if server is not None and server.is_running():
        server.reload_if_changed()
        target = GrpcServerTarget(host="localhost", port=None, socket=str(server.socket), location_name=LOCATION_NAME)
    else:
        target = ModuleTarget(
            module_name=DEFINITIONS_MODULE, attribute=None, working_directory=None, location_name=LOCATION_NAME
        )
    # A load error is reported once, below, in one line: not as the code server's traceback and Dagster's warning.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        process = WorkspaceProcessContext(instance, target, code_server_log_level="CRITICAL")
    with process:
        workspace = process.create_request_context()
        error = workspace.get_code_location_error(LOCATION_NAME)
        if error is not None:
            raise CodeLocationError(f"the Flux code location did not load: {_root_cause(error)}")
        yield workspace, workspace.get_code_location(LOCATION_NAME)


def published_settings(location: CodeLocation) -> dict[str, str]:
    """The settings the location was loaded with, as its definitions publish them (core/run_settings.py)."""
    repository = next(iter(location.get_repositories().values()))
    entry = (repository.repository_snap.metadata or {}).get(LOCATION_SETTINGS_KEY)
    return dict(getattr(entry, "data", None) or {})


def _root_cause(error: SerializableErrorInfo) -> str:
    """The innermost error's first line, without its module path: "FluxConfigError: … (check FLUX_…)"."""
    while error.cause is not None:
        error = error.cause
    line = _first_line(error.message)
    name, _, rest = line.partition(": ")
    return f"{name.rsplit('.', 1)[-1]}: {rest}" if rest else line


def daemon_is_dequeuing(instance: dg.DagsterInstance) -> bool:
    """True when a daemon's run queue has sent a heartbeat lately (`make dagster`, `flux stack up` with it)."""
    queue = QueuedRunCoordinatorDaemon.daemon_type()
    status = get_daemon_statuses(
        instance, [queue], heartbeat_tolerance_seconds=DAEMON_HEARTBEAT_TOLERANCE_S, ignore_errors=True
    )[queue]
    return bool(status.required and status.healthy)


def create_asset_run(
    instance: dg.DagsterInstance, location: CodeLocation, keys: set[dg.AssetKey], tags: Mapping[str, str]
) -> dg.DagsterRun:
    """A run of the asset job over `keys` and every check on them, as the UI's "Materialize" creates it."""
    repository = next(iter(location.get_repositories().values()))
    checks = {key for key in repository.asset_graph.asset_check_keys if key.asset_key in keys}
    selector = JobSubsetSelector(
        location_name=location.name,
        repository_name=repository.name,
        job_name=ASSET_JOB,
        op_selection=None,
        asset_selection=keys,
        asset_check_selection=checks,
    )
    job = location.get_job(selector)
    plan = location.get_execution_plan(job, RUN_CONFIG, step_keys_to_execute=None, known_state=None, instance=instance)
    return instance.create_run(
        job_name=ASSET_JOB,
        run_id=None,
        run_config=RUN_CONFIG,
        resolved_op_selection=None,
        step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute,
        op_selection=None,
        status=dg.DagsterRunStatus.NOT_STARTED,
        root_run_id=None,
        parent_run_id=None,
        tags={**job.tags, **tags},
        job_snapshot=job.job_snapshot,
        execution_plan_snapshot=plan.execution_plan_snapshot,
        parent_job_snapshot=job.parent_job_snapshot,
        remote_job_origin=job.get_remote_origin(),
        job_code_origin=job.get_python_origin(),
        asset_selection=frozenset(keys),
        asset_check_selection=frozenset(checks),
        asset_graph=repository.asset_graph,
    )


def submit(instance: dg.DagsterInstance, workspace: BaseWorkspaceRequestContext, run: dg.DagsterRun) -> str:
    """Queue the run when a daemon dequeues (it then obeys the run and pool limits); else launch it now."""
    if daemon_is_dequeuing(instance):
        instance.submit_run(run.run_id, workspace)
        return "queued"
    instance.launch_run(run.run_id, workspace)
    return "launched"


def wait_for_run(
    instance: dg.DagsterInstance, run_id: str, on_step: StepListener | None = None, poll_s: float = POLL_S
) -> dg.DagsterRun:
    """Follow the run's event log until it finishes; each step start and end goes to `on_step`. A run left in the
    queue with no daemon to start it raises RunNotDequeued instead of waiting for ever."""
    cursor: str | None = None
    while True:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.status is dg.DagsterRunStatus.QUEUED and not daemon_is_dequeuing(instance):
            raise RunNotDequeued(
                f"run {run_id} is queued, but no Dagster daemon is running to start it: "
                "`flux stack up` starts one (the run stays queued until then)"
            )
        finished = run is not None and run.is_finished
        batch = instance.get_records_for_run(run_id, cursor=cursor, of_type=STEP_EVENTS)
        cursor = batch.cursor
        for record in batch.records:
            event = _step_event(record.event_log_entry.dagster_event)
            if event is not None and on_step is not None:
                on_step(event)
        if finished and not batch.has_more:
            return run  # type: ignore[return-value]
        if not batch.has_more:
            time.sleep(poll_s)


def _step_event(event: object) -> StepEvent | None:
    kind = getattr(event, "event_type", None)
    step_key = getattr(event, "step_key", None) or ""
    message = getattr(event, "message", None) or ""
    if kind is DagsterEventType.STEP_START:
        return StepEvent(step_key, "started")
    if kind is DagsterEventType.STEP_SUCCESS:
        return StepEvent(step_key, "succeeded")
    if kind is DagsterEventType.STEP_SKIPPED:
        return StepEvent(step_key, "skipped")
    if kind is DagsterEventType.STEP_FAILURE:
        error = getattr(event.event_specific_data, "error", None)  # type: ignore[attr-defined]
        return StepEvent(step_key, "failed", _first_line(error.message if error else message))
    if kind is DagsterEventType.RUN_FAILURE:
        return StepEvent("", "failed", _first_line(message))
    return None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
