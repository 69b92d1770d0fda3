"""The nightly path end to end, driven by a real `dagster-daemon` against the test instance: the sensor's first
look records the files and starts nothing; a source file changes, the sensor starts the raw pulls, declarative
automation carries the one changed source down to a new published index with every check passing, and the sources
that did not change stop at their pull. The schedule ticks (on a cron of every minute) and its pulls, which find
nothing new, go no further; the freshness daemon marks the pulls fresh. Every outcome is read back from the
daemon's own tick history in the instance. Bounded in time: each path has NIGHTLY_BUDGET_S seconds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.freshness import FreshnessState
from dagster._core.events import DagsterEventType
from dagster._core.scheduler.instigation import InstigatorTick, TickStatus
from sqlalchemy import text

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.assets.releases import RELEASE_SOURCES
from dagster_project.defs.automation import AUTOMATION_SENSOR
from dagster_project.defs.materialize import MaterializeOutcome, materialize_selection
from dagster_project.defs.release_partitions import history_asset_key, sync_release_partitions
from dagster_project.defs.schedules import NIGHTLY_SCHEDULE
from dagster_project.defs.sensors import SNAPSHOT_SENSOR
from dagster_project.index.tables import as_sql, qualified
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull
from retrieval.model.index_state import current_index
from tests.support.location import location_env
from tests.support.session import demo_read_later

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-extended`.
pytestmark = pytest.mark.resilience

NIGHTLY_BUDGET_S = 600
# Ticks that requested nothing after the last run ended: the first one already sees every materialization of that
# run; a second one leaves room for an evaluation that was under way as the run ended.
QUIET_TICKS = 2
MARKER = "nightlymarker"  # one token no demo text has, so the new version is recognisable in the served table
UNCHANGED_SOURCES = ("reactome", "kegg", "hgnc")
CARRIED_DOWN = {
    "openalex_documents",
    "chunks",
    "chunk_embeddings",
    "chunk_vector_index",
    "chunk_bm25_index",
    "candidate_index",
    "retrieval_scorecard",
    "answer_scorecard",
    "published_index",
}


def _daemon_env(settings: FluxSettings, demo_dir: Path, cron: str = "0 2 * * *") -> dict[str, str]:
    return location_env(
        settings,
        FLUX_SOURCE_MODE="demo",
        FLUX_DEMO_DIR=str(demo_dir),
        FLUX_SNAPSHOT_SENSOR_INTERVAL="5",
        FLUX_AUTOMATION_INTERVAL="5",
        FLUX_NIGHTLY_CRON=cron,
    )


@pytest.fixture
def daemon(
    demo_platform: FluxSettings, demo_scorecards: MaterializeOutcome, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[FluxSettings, Path]]:
    """`dagster-daemon run` on the demo platform as `make run` leaves it (its scorecards recorded, which the nightly
    run's gates compare against), reading a copy of the demo folder (with the nightly cron that
    `request.param` names, if any); afterwards the demo's
    original openalex pull is served again, whatever the test did — when a later test reads the demo (the test
    is marked to run last, so in a whole-suite run none does and the session drops the database instead)."""
    demo_dir = tmp_path / "demo"
    shutil.copytree(demo_platform.sources.demo_dir, demo_dir)
    original = load_files(latest_manifest("openalex", demo_platform.raw_root_path), demo_platform.raw_root_path)
    # The test instance is shared with other tests, whose runs (live pulls, fault injection) may be the latest
    # records of the raw assets; pull the demo once so the instance's latest data versions are this platform's,
    # as they are on a deployment with one platform per instance.
    assert materialize_selection(demo_platform, "group:raw").success
    _record_release_history(demo_platform)
    _forget_instigators()
    log = (tmp_path / "daemon.log").open("w")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(REPO_ROOT / "workspace.yaml")],
        cwd=REPO_ROOT,
        env=_daemon_env(demo_platform, demo_dir, getattr(request, "param", "0 2 * * *")),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield demo_platform, demo_dir
    finally:
        _stop(process)
        log.close()
        print(f"daemon log: {tmp_path / 'daemon.log'}")
        if demo_read_later(request):
            release = latest_manifest("openalex", demo_platform.raw_root_path).release
            write_pull(RawPull("openalex", original, release=release), demo_platform.raw_root_path)
            # Putting the demo back, not judging it: the scorecards' gates compare the original's (reused) results
            # with those accepted for the changed demo, and may call the difference a regression.
            assert materialize_selection(demo_platform.evolve(eval_tolerance=1.0), "openalex_documents*").success


def _record_release_history(settings: FluxSettings) -> None:
    """The demo's releases recorded in the history, and partitions that other tests' raw zones left unrecorded
    dropped: what a deployment that has run before looks like, so the runs these tests read are the nightly
    path's and not the history's first recording (tests/unit/test_release_history.py covers that)."""
    for source in RELEASE_SOURCES:
        with dg.DagsterInstance.get() as instance:
            sync_release_partitions(instance, source, settings.raw_root_path)
            missing = set(instance.get_dynamic_partitions(f"{source}_releases")) - instance.get_materialized_partitions(
                history_asset_key(source)
            )
        for key in sorted(missing):
            assert materialize_selection(settings, f"key:{source}_release_history", partition=key).success, key


def _forget_instigators() -> None:
    """Each daemon here starts as on a new instance: no sensor cursor or schedule state left by another test (the
    session's instance is shared), so the sensor's first look is a first look."""
    with dg.DagsterInstance.get() as instance:
        for state in instance.all_instigator_state():
            instance.delete_instigator_state(state.instigator_origin_id, state.selector_id)


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _runs(instance: dg.DagsterInstance, since: datetime, sensor: str | None = None) -> list[dg.DagsterRun]:
    tags = {"dagster/sensor_name": sensor} if sensor else None
    return list(instance.get_runs(filters=dg.RunsFilter(created_after=since, tags=tags)))


def _settled(instance: dg.DagsterInstance, since: datetime) -> list[dg.DagsterRun] | None:
    """Every run since `since` finished, and after the last one ended the automation sensor completed QUIET_TICKS
    ticks that requested nothing: the daemon looked at everything those runs wrote and found nothing more to start.
    Read from the daemon's own tick history, not inferred from a quiet period; else None."""
    records = instance.get_run_records(filters=dg.RunsFilter(created_after=since))
    runs = [record.dagster_run for record in records]
    if not _finished(runs):
        return None
    last_end = max(record.end_time or 0.0 for record in records)
    quiet = [
        tick
        for tick in _automation_ticks(instance, after=last_end)
        if tick.timestamp > last_end
        and tick.status in (TickStatus.SKIPPED, TickStatus.SUCCESS)
        and not tick.requested_asset_materialization_count
        and not tick.run_ids
    ]
    if len(quiet) < QUIET_TICKS:
        return None
    again = _runs(instance, since)
    return again if len(again) == len(runs) and _finished(again) else None


def _automation_ticks(instance: dg.DagsterInstance, after: float) -> list[InstigatorTick]:
    """The ticks of the declarative-automation sensor that started after `after` (none before its first tick)."""
    return _ticks(instance, AUTOMATION_SENSOR, after)


def _ticks(instance: dg.DagsterInstance, instigator: str, after: float) -> list[InstigatorTick]:
    states = [state for state in instance.all_instigator_state() if state.instigator_name == instigator]
    return [
        tick
        for state in states
        for tick in instance.get_ticks(state.instigator_origin_id, state.selector_id, after=after)
    ]


def _ended(ticks: list[InstigatorTick]) -> list[InstigatorTick]:
    return [tick for tick in ticks if tick.status is not TickStatus.STARTED]


def _wait(condition: str, deadline: float, probe: object) -> object:
    while time.monotonic() < deadline:
        found = probe()  # type: ignore[operator]
        if found:
            return found
        time.sleep(2)
    pytest.fail(f"the nightly path did not reach '{condition}' within {NIGHTLY_BUDGET_S} s (see the daemon log)")


def _finished(runs: list[dg.DagsterRun]) -> bool:
    return bool(runs) and all(run.is_finished for run in runs)


def _events(instance: dg.DagsterInstance, runs: list[dg.DagsterRun], kind: DagsterEventType) -> list[object]:
    return [entry.dagster_event for run in runs for entry in instance.all_logs(run.run_id, of_type=kind)]


def _add_marker_sentence(demo_dir: Path) -> None:
    """A revised abstract: one work gains a sentence (what an upstream correction looks like)."""
    path = demo_dir / "openalex" / "works_page1.json"
    page = json.loads(path.read_text())
    inverted = page["results"][0]["abstract_inverted_index"]
    start = 1 + max(position for positions in inverted.values() for position in positions)
    for offset, word in enumerate(f"A {MARKER} sentence was added upstream.".split()):
        inverted.setdefault(word, []).append(start + offset)
    path.write_text(json.dumps(page))


@pytest.mark.changes_demo
def test_a_changed_source_file_reaches_a_new_published_index_through_the_daemon(
    daemon: tuple[FluxSettings, Path],
) -> None:
    settings, demo_dir = daemon
    engine = engine_for(settings.platform_database_url)
    served_before = current_index(engine)
    started = datetime.now(UTC)
    deadline = time.monotonic() + NIGHTLY_BUDGET_S

    with dg.DagsterInstance.get() as instance:
        # First tick: no cursor yet, so the sensor records the files as they are (the demo pull above read them)
        # and starts nothing.
        first = _wait(
            "the sensor's first tick", deadline, lambda: _ended(_ticks(instance, SNAPSHOT_SENSOR, started.timestamp()))
        )
        assert [tick.status for tick in first] == [TickStatus.SKIPPED], first  # type: ignore[union-attr]
        assert "first evaluation: watching" in (first[0].skip_reason or "")  # type: ignore[index]
        assert _runs(instance, started) == []
        changed_at = datetime.now(UTC)
        _add_marker_sentence(demo_dir)

        def published() -> object:
            state = current_index(engine)
            return state if state.version != served_before.version else None

        served_after = _wait("a new published index", deadline, published)
        print(f"nightly path: change → published index in {(datetime.now(UTC) - changed_at).total_seconds():.0f} s")
        runs = _wait("every run finished", deadline, lambda: _settled(instance, changed_at))
        assert [run.status for run in runs] == [dg.DagsterRunStatus.SUCCESS] * len(runs)  # type: ignore[union-attr]
        pulls = _runs(instance, changed_at, sensor=SNAPSHOT_SENSOR)
        assert len(pulls) == 1, "one change, one sensor run"
        assert pulls[0].tags["flux/trigger"] == "sensor"
        automated = [run for run in runs if run.run_id != pulls[0].run_id]  # type: ignore[union-attr]
        assert automated, "the change must reach downstream by automation, not by the sensor's own run"

        materialized = {
            event.asset_key.to_user_string()  # type: ignore[attr-defined]
            for event in _events(instance, automated, DagsterEventType.ASSET_MATERIALIZATION)
        }
        assert materialized >= CARRIED_DOWN
        untouched = {f"{source}_documents" for source in UNCHANGED_SOURCES}
        assert not materialized & untouched, "sources whose pull found nothing new must stop at the pull"

        checks = _events(instance, runs, DagsterEventType.ASSET_CHECK_EVALUATION)
        failed = [
            event.event_specific_data.check_name
            for event in checks  # type: ignore[attr-defined]
            if not event.event_specific_data.passed
        ]  # type: ignore[attr-defined]
        assert checks and failed == [], f"the gates must hold on the way to publishing: {failed}"

    def marked(state: object) -> int:
        table = as_sql(qualified(state.chunk_table))  # type: ignore[attr-defined]
        with engine.connect() as conn:
            return conn.execute(
                text(f"SELECT count(*) FROM {table} WHERE content LIKE :marker"), {"marker": f"%{MARKER}%"}
            ).scalar_one()

    assert (marked(served_before), marked(served_after)) == (0, 1)


@pytest.mark.changes_demo
@pytest.mark.parametrize("daemon", ["* * * * *"], indirect=True, ids=["cron-every-minute"])
def test_the_schedule_ticks_and_a_pull_with_nothing_new_stops_there(daemon: tuple[FluxSettings, Path]) -> None:
    settings, _ = daemon
    started = datetime.now(UTC)
    deadline = time.monotonic() + NIGHTLY_BUDGET_S
    with dg.DagsterInstance.get() as instance:
        ticks = _wait(
            "the schedule's first tick",
            deadline,
            lambda: _ended(_ticks(instance, NIGHTLY_SCHEDULE, started.timestamp())),
        )
        tick = ticks[0]  # type: ignore[index]
        assert tick.status is TickStatus.SUCCESS and len(tick.run_ids) == 1, tick
        runs = _wait("the scheduled run and automation after it", deadline, lambda: _settled(instance, started))
        # The cron fires every minute, so later ticks may have pulled too: only the schedule may have started runs.
        assert [r for r in runs if r.tags.get("dagster/schedule_name") != NIGHTLY_SCHEDULE] == [], (
            "the raw pulls found nothing new: nothing downstream may run"
        )  # type: ignore[union-attr]
        run = next(r for r in runs if r.run_id == tick.run_ids[0])  # type: ignore[union-attr]
        assert run.status is dg.DagsterRunStatus.SUCCESS
        assert run.tags["dagster/schedule_name"] == NIGHTLY_SCHEDULE
        assert (run.tags["flux/trigger"], run.tags["flux/raw_root"]) == ("schedule", settings.raw_root_path)
        raw = [dg.AssetKey(f"{source}_raw") for source in (*UNCHANGED_SOURCES, "openalex")]

        def fresh() -> object:
            records = instance.get_freshness_state_records(raw)
            return records if len(records) == len(raw) else None

        states = _wait("the freshness daemon's first evaluation", deadline, fresh)
        assert {record.freshness_state for record in states.values()} == {  # type: ignore[union-attr]
            FreshnessState.PASS
        }
