"""Where `make test`'s time goes, from pytest's own reports: each phase's wall time, the tests it ran and the time
they took, and the slowest tests and fixtures of the whole run.

    .venv/bin/python benchmarks/suite_time.py [REPORTS] [--against OTHER_REPORTS] [--top 10]

REPORTS (default `.flux/test/reports`, what `make test` writes) holds `phases.tsv` (one line per phase: name, start
and end in epoch seconds, exit code; written by the Makefile) and a `--report-log` file per pytest phase
(`<phase>.jsonl`). A test's time is its set-up, call and teardown; a fixture's is its set-up without the fixtures it
requested (tests/support/suite_clock.py), charged to the test that first needed it. With `--against`, every figure
is printed beside the other run's and as a ratio to it. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_REPORTS = Path(".flux/test/reports")
FIXTURE_SETUP = "fixture_setup"  # the user_properties key tests/support/suite_clock.py writes


@dataclass
class Phase:
    name: str
    wall_s: float | None = None
    exit_code: int | None = None
    tests: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    test_s: float = 0.0  # set-up + call + teardown, summed over its tests
    first_start: float | None = None
    started: float | None = None


@dataclass
class Run:
    phases: dict[str, Phase]
    tests: dict[str, float]  # node id -> seconds (set-up + call + teardown)
    fixtures: list[tuple[float, str, str, str]]  # (seconds, fixture, scope, node id of the test that set it up)

    @property
    def wall_s(self) -> float | None:
        timed = [p for p in self.phases.values() if p.wall_s is not None and p.started is not None]
        if not timed:
            return None
        return max(p.started + p.wall_s for p in timed) - min(p.started for p in timed)  # type: ignore[operator]


def read_run(reports: Path) -> Run:
    phases: dict[str, Phase] = {}
    table = reports / "phases.tsv"
    if table.is_file():
        for line in table.read_text().splitlines():
            name, start, end, code = line.split()
            phases[name] = Phase(name, float(end) - float(start), int(code), started=float(start))
    tests: dict[str, float] = defaultdict(float)
    fixtures: list[tuple[float, str, str, str]] = []
    for log in sorted(reports.glob("*.jsonl")):
        phase = phases.setdefault(log.stem, Phase(log.stem))
        for line in log.read_text().splitlines():
            report = json.loads(line)
            if report.get("$report_type") != "TestReport":
                continue
            node, when = report["nodeid"], report["when"]
            tests[node] += report["duration"]
            phase.test_s += report["duration"]
            if when == "setup":
                phase.first_start = min(report["start"], phase.first_start or report["start"])
                for key, value in report.get("user_properties", []):
                    if key == FIXTURE_SETUP:
                        fixtures.append((value["seconds"], value["fixture"], value["scope"], node))
            if when == "call" or (when == "setup" and report["outcome"] != "passed"):
                phase.tests += 1
                phase.outcomes[report["outcome"]] = phase.outcomes.get(report["outcome"], 0) + 1
    return Run(phases, dict(tests), sorted(fixtures, reverse=True))


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:7.1f}"


def _ratio(now: float | None, then: float | None) -> str:
    if now is None or then is None or then <= 0:
        return ""
    return f"  ({then:7.1f} s before, {now / then:5.2f}x)"


def print_phases(run: Run, against: Run | None) -> None:
    print("phase         wall s  tests  test s  collection s  exit")
    for phase in run.phases.values():
        collection = (
            phase.first_start - phase.started if phase.first_start is not None and phase.started is not None else None
        )
        outcomes = ",".join(f"{k} {v}" for k, v in sorted(phase.outcomes.items()) if k != "passed")
        before = against.phases.get(phase.name) if against else None
        print(
            f"{phase.name:12s} {_seconds(phase.wall_s)} {phase.tests:6d} {phase.test_s:7.1f} {_seconds(collection):>13}"
            f"  {'—' if phase.exit_code is None else phase.exit_code} {outcomes}"
            + (_ratio(phase.wall_s, before.wall_s) if before else "")
        )
    print(f"{'all phases':12s} {_seconds(run.wall_s)}" + (_ratio(run.wall_s, against.wall_s) if against else ""))


def print_slowest(run: Run, against: Run | None, top: int) -> None:
    print(f"\n{top} slowest tests (set-up + call + teardown, s):")
    for node, seconds in sorted(run.tests.items(), key=lambda item: -item[1])[:top]:
        before = against.tests.get(node) if against else None
        print(f"  {seconds:7.1f}  {node}" + (_ratio(seconds, before) if before else ""))
    print(f"\n{top} slowest fixtures (set-up without the fixtures they use, s):")
    for seconds, fixture, scope, node in run.fixtures[:top]:
        print(f"  {seconds:7.1f}  {fixture} ({scope}), first for {node}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="?", type=Path, default=DEFAULT_REPORTS)
    parser.add_argument("--against", type=Path, help="another run's reports, to print ratios to")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    if not args.reports.is_dir():
        raise SystemExit(f"{args.reports}: no such folder (make test writes its reports there)")
    run = read_run(args.reports)
    against = read_run(args.against) if args.against else None
    print_phases(run, against)
    print_slowest(run, against, args.top)


if __name__ == "__main__":
    main()
