"""What the daemon will do tonight and what it last did: the schedule's next tick, each instigator's last tick, and
whether a daemon is there to run them. Read from the instance, as the UI's Automation page reads it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import dagster as dg
from dagster._core.scheduler.instigation import InstigatorState, InstigatorTick
from dagster._daemon.controller import get_daemon_statuses
from dagster._utils.schedules import cron_string_iterator

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.automation import AUTOMATION_SENSOR
from dagster_project.defs.launch import DAEMON_HEARTBEAT_TOLERANCE_S
from dagster_project.defs.schedules import NIGHTLY_SCHEDULE
from dagster_project.defs.sensors import SNAPSHOT_SENSOR

INSTIGATORS = (NIGHTLY_SCHEDULE, SNAPSHOT_SENSOR, AUTOMATION_SENSOR)


@dataclass(frozen=True)
class InstigatorStatus:
    name: str
    next_tick: datetime | None  # the schedule's; sensors tick every interval
    last_tick: datetime | None
    last_status: str  # success, skipped, failure, started; "never" before the first tick
    last_detail: str  # the skip reason, the error's first line, or the runs requested


@dataclass(frozen=True)
class NightlyStatus:
    daemon_live: bool
    instigators: list[InstigatorStatus]


def next_nightly_tick(settings: FluxSettings, after: float) -> datetime:
    """The first time at or after `after` (epoch seconds) that FLUX_NIGHTLY_CRON fires in its time zone."""
    return next(cron_string_iterator(after, settings.ops.nightly_cron, settings.ops.nightly_timezone))


def nightly_status(settings: FluxSettings, instance: dg.DagsterInstance, now: float) -> NightlyStatus:
    states = {state.instigator_name: state for state in instance.all_instigator_state()}
    statuses = get_daemon_statuses(
        instance,
        instance.get_required_daemon_types(),
        heartbeat_tolerance_seconds=DAEMON_HEARTBEAT_TOLERANCE_S,
        curr_time_seconds=now,
    )
    rows = []
    for name in INSTIGATORS:
        tick = _last_tick(instance, states.get(name))
        rows.append(
            InstigatorStatus(
                name=name,
                next_tick=next_nightly_tick(settings, now) if name == NIGHTLY_SCHEDULE else None,
                last_tick=tick.timestamp and datetime.fromtimestamp(tick.timestamp).astimezone() if tick else None,
                last_status=tick.status.value.lower() if tick else "never",
                last_detail=_detail(tick) if tick else "",
            )
        )
    return NightlyStatus(daemon_live=bool(statuses) and all(s.healthy for s in statuses.values()), instigators=rows)


def _last_tick(instance: dg.DagsterInstance, state: InstigatorState | None) -> InstigatorTick | None:
    if state is None:
        return None
    ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=1)
    return ticks[0] if ticks else None


def _detail(tick: InstigatorTick) -> str:
    if tick.error is not None:
        return next((line for line in tick.error.message.splitlines() if line.strip()), "")
    if tick.run_ids:
        return f"{len(tick.run_ids)} run(s): {', '.join(run_id[:8] for run_id in tick.run_ids)}"
    return tick.skip_reason or ""
