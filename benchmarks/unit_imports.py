"""What collecting the unit tests imports: every module under tests/unit imported in one fresh interpreter (as
pytest's collection does), its seconds (best of --repeat) and whether torch, Ray, Dagster or sentence-transformers
came with it. Run it in two checkouts to compare them (`--root OTHER_CHECKOUT` runs the other one's tests with
its own code, from the same interpreter).

    .venv/bin/python benchmarks/unit_imports.py [--root .] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("torch", "ray", "dagster", "sentence_transformers", "neo4j", "matplotlib", "sklearn", "dbt")
PROBE = """
import importlib, json, sys, time
from pathlib import Path
root = Path(sys.argv[1])
sys.path.insert(0, str(root))
modules = sorted(
    ".".join(p.relative_to(root).with_suffix("").parts) for p in (root / "tests" / "unit").rglob("test_*.py")
)
started = time.perf_counter()
for name in modules:
    importlib.import_module(name)
took = time.perf_counter() - started
heavy = {h: h in sys.modules for h in json.loads(sys.argv[2])}
print(json.dumps({"modules": len(modules), "seconds": took, "heavy": heavy}))
"""


def measure(root: Path, repeat: int) -> dict[str, object]:
    best: dict[str, object] | None = None
    for _ in range(repeat):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", PROBE, str(root), json.dumps(HEAVY)],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        result = json.loads(out.splitlines()[-1]) | {"process": time.perf_counter() - started}
        if best is None or result["seconds"] < best["seconds"]:  # type: ignore[operator]
            best = result
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--against", type=Path, help="another checkout, measured the same way as a baseline")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    here = measure(args.root.resolve(), args.repeat)
    rows = [("this checkout", here)]
    if args.against:
        rows.insert(0, ("baseline", measure(args.against.resolve(), args.repeat)))
    for label, row in rows:
        loaded = ", ".join(h for h, on in row["heavy"].items() if on) or "none"  # type: ignore[union-attr]
        print(
            f"{label:14} {row['modules']} modules: imports {row['seconds']:.2f} s, process {row['process']:.2f} s;"
            f" heavy packages loaded: {loaded}"
        )
    if args.against:
        print(f"ratio (this / baseline): {rows[1][1]['seconds'] / rows[0][1]['seconds']:.2f}")  # type: ignore[operator]


if __name__ == "__main__":
    main()
