"""The CPU an idle stack costs: its Dagster daemon and code server, with every process they start, over one window.

Give one FLUX_HOME per running stack (for a before → after, one started from each checkout, on spare ports); all are
measured over the same window, side by side, and each is printed with its ratio to the first:

    .venv/bin/python benchmarks/idle_stack.py --seconds 600 /tmp/stack-before /tmp/stack-after

A process's CPU time counts its own and that of the children it has reaped, so code servers that start and exit
inside the window are counted (processes that exit are read through their parent). Nothing here asserts a figure.
"""

from __future__ import annotations

import argparse
import time

import psutil

ROOTS = ("dagster-daemon run", "code-server start")


def _roots(home: str) -> list[psutil.Process]:
    """The daemon and the code server whose command line names a path under `home`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        argv = " ".join(process.info["cmdline"] or [])
        if f"{home.rstrip('/')}/" in argv and any(root in argv for root in ROOTS):
            found.append(process)
    return found


def _cpu_seconds(home: str) -> dict[int, float]:
    seen: dict[int, float] = {}
    for root in _roots(home):
        for process in [root, *root.children(recursive=True)]:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            seen[process.pid] = times.user + times.system + times.children_user + times.children_system
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("homes", nargs="+", help="FLUX_HOME of each running stack; the first is the baseline")
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    missing = [home for home in args.homes if not _roots(home)]
    if missing:
        raise SystemExit(f"no daemon or code server runs for {', '.join(missing)} (`flux stack up` there first)")
    start = {home: _cpu_seconds(home) for home in args.homes}
    time.sleep(args.seconds)
    baseline = None
    for home in args.homes:
        end = _cpu_seconds(home)  # processes alive now; one that exited was reaped into its parent's time
        used = sum(cpu - start[home].get(pid, 0.0) for pid, cpu in end.items())
        per_minute = used / args.seconds * 60
        baseline = baseline or per_minute
        print(
            f"{home}: {used:.1f} CPU-s in {args.seconds:.0f} s = {per_minute:.2f} CPU-s a minute "
            f"({per_minute / baseline:.2f}x the first); {len(end)} processes at the end"
        )


if __name__ == "__main__":
    main()
