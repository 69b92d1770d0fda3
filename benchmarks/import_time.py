"""What a process pays to start: the imports of a Dagster step, a Ray actor, `flux ask` and `flux serve`, each in a
fresh interpreter, with the bytecode `make setup` compiles against none (Python compiling every module again, as
it does on each start where .pyc files are neither shipped nor written: PYTHONDONTWRITEBYTECODE, a read-only image).

    .venv/bin/python benchmarks/import_time.py [--repeat 3]

The baseline points PYTHONPYCACHEPREFIX at an empty folder, so the interpreter finds no .pyc; the other run reads
the installed ones. Prints seconds (best of --repeat) and the ratio for each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# What each kind of process imports before it does any work.
STARTS = {
    "code location (a Dagster step, the daemon)": "import dagster_project.defs.definitions",
    "encoder (a Ray actor, the scorecards)": "import sentence_transformers",
    "serving (`flux serve`, `flux ask`)": "import serving.api",
    "MLflow (every scorecard)": "import mlflow",
}


def seconds(statement: str, environment: dict[str, str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], env=environment, check=True)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    compiled = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as empty:
        from_source = {**compiled, "PYTHONPYCACHEPREFIX": empty}
        print("| process | no bytecode | installed bytecode | ratio |\n|---|---|---|---|")
        for name, statement in STARTS.items():
            before = seconds(statement, from_source, args.repeat)
            after = seconds(statement, compiled, args.repeat)
            print(f"| {name} | {before:.2f} s | {after:.2f} s | {after / before:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
