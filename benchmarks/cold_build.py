"""A whole materialization from empty stores, then the same again with nothing changed, with a per-asset table.

    FLUX_HOME=.flux/bench FLUX_SOURCE_MODE=snapshot FLUX_SNAPSHOT_DIR=../shared/data FLUX_PG_DATABASE=flux_snapshot \\
        .venv/bin/python benchmarks/cold_build.py [--cold-run-id RUN_ID]

Runs `materialize_selection(settings, "*")` (what `flux materialize` runs) on a fresh platform: every asset and
check, in one process. `--cold-run-id` reports a cold run made earlier (e.g. by `time flux materialize` in a fresh
FLUX_HOME) instead of making one. Step times come from the Dagster instance's step stats; the ratio printed is the
no-change run's wall time over the cold one's (goal: at most 5 %).
"""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections import defaultdict

import dagster as dg
import psutil

from dagster_project.core.settings import get_settings
from dagster_project.defs.materialize import materialize_selection
from dagster_project.ops.instance import render_dagster_home


class PeakRss:
    """The largest summed resident memory of this process and all its descendants, sampled in a thread."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(every_s,), daemon=True)
        self._thread.start()

    def _sample(self, every_s: float) -> None:
        me = psutil.Process()
        while not self._stop.wait(every_s):
            total = 0
            for process in [me, *me.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += process.memory_info().rss
            self.peak = max(self.peak, total)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def step_seconds(instance: dg.DagsterInstance, run_id: str) -> dict[str, float]:
    """Seconds per asset (its checks included), from the run's step stats."""
    out: dict[str, float] = defaultdict(float)
    for stat in instance.get_run_step_stats(run_id):
        if stat.start_time and stat.end_time:
            out[stat.step_key] += stat.end_time - stat.start_time
    return dict(out)


def run_seconds(instance: dg.DagsterInstance, run_id: str) -> float:
    record = instance.get_run_record_by_id(run_id)
    assert record and record.start_time and record.end_time, f"run {run_id} has not finished"
    return record.end_time - record.start_time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cold-run-id", default=None, help="report this earlier cold run instead of making one")
    parser.add_argument("--no-rerun", action="store_true", help="report the cold run only")
    parser.add_argument(
        "--floor-seconds",
        type=float,
        default=None,
        help="the encoder's floor (benchmarks/encode_floor.py): steps are also given as multiples",
    )
    args = parser.parse_args()
    settings = get_settings()
    peak = PeakRss()
    runs: dict[str, tuple[str, float]] = {}
    if args.cold_run_id:
        runs["cold"] = (args.cold_run_id, float("nan"))
    for name in ("cold",) if args.no_rerun else ("cold", "no change"):
        if name in runs:
            continue
        start = time.perf_counter()
        outcome = materialize_selection(settings, "*")
        runs[name] = (outcome.run_id, time.perf_counter() - start)
        print(
            f"{name}: run {outcome.run_id} success={outcome.success}, {len(outcome.materialized)} assets, "
            f"checks {outcome.checks_passed}/{outcome.checks_total}, {runs[name][1]:.1f} s wall"
        )
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        steps = {name: step_seconds(instance, run_id) for name, (run_id, _) in runs.items()}
        totals = {name: run_seconds(instance, run_id) for name, (run_id, _) in runs.items()}
    names = list(runs)
    print("\n| asset step | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for key in sorted(steps["cold"], key=lambda k: -steps["cold"][k]):
        print(f"| {key} | " + " | ".join(f"{steps[n].get(key, 0.0):.1f} s" for n in names) + " |")
    print("| **Dagster run** | " + " | ".join(f"**{totals[n]:.1f} s**" for n in names) + " |")
    if "no change" in totals:
        print(f"\nno change / cold: {totals['no change'] / totals['cold']:.3f} (Dagster run times; goal <= 0.05)")
    if args.floor_seconds:
        for key in ("chunks", "retrieval_scorecard", "answer_scorecard"):
            print(f"{key}: {steps['cold'].get(key, 0.0) / args.floor_seconds:.2f}x the encoder floor")
        print(f"cold build: {totals['cold'] / args.floor_seconds:.2f}x the encoder floor")
    peak.stop()
    print(
        f"peak RSS of the run: {peak.peak / 2**30:.2f} GiB (this process and its descendants, Ray's workers "
        "included, sampled each second; the Postgres, Neo4j and Redis servers are not descendants)"
    )


if __name__ == "__main__":
    main()
