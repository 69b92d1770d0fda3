"""A refresh that changes one source release, against one that changes nothing, and what keeping releases costs.

    FLUX_HOME=.flux/rel FLUX_SOURCE_MODE=snapshot FLUX_SNAPSHOT_DIR=../shared/data FLUX_PG_DATABASE=flux_rel \\
        .venv/bin/python benchmarks/release_refresh.py [--source kegg]

On a running stack with the snapshot loaded (today's era served), in one process:
1. baseline: the source's raw pull → release → documents with nothing new (after one warm-up run);
2. the source's 2019-03 release (FLUX_SNAPSHOT_RELEASE=2019-03): kept, compared with today's, gated, loaded;
3. today's release again: kept already, compared with 2019-03, gated, loaded (served again).
Prints each run's wall time, the ratio of (2) and (3) to (1), the churn figures of (3), and the size of the release
tables (rows and bytes, indexes included) against the served tables they sit beside.
"""

from __future__ import annotations

import argparse
import time

import dagster as dg
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection

RELEASE_TABLES = (
    "source_releases",
    "release_pathways",
    "release_members",
    "release_genes",
    "release_changes",
    "resolution_releases",
    "release_equivalences",
)
SERVED_TABLES = ("pathways", "pathway_members", "gene_identifiers")


def timed(settings, selection: str) -> tuple[float, str]:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    outcome = materialize_selection(settings, selection)
    if not outcome.success:
        raise SystemExit(f"run {outcome.run_id} failed: {outcome}")
    return time.monotonic() - started, outcome.run_id


def figures(run_id: str, asset: str) -> dict[str, object]:
    with dg.DagsterInstance.get() as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    for record in records:
        event = record.event_log_entry.asset_materialization
        if event is not None and event.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in event.metadata.items() if isinstance(v.value, int | str)}
    return {}


def sizes(settings, tables: tuple[str, ...]) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    engine = engine_for(settings.platform_database_url)
    with engine.connect() as conn:
        # Table names are the constants above.
        return {
            t: conn.execute(text(f"SELECT count(*), pg_total_relation_size('{t}') FROM {t}")).one()._tuple()
            for t in tables
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="kegg", choices=["kegg", "reactome"])
    args = parser.parse_args()
    settings = get_settings()
    selection = f"key:{args.source}_raw or key:{args.source}_release or key:{args.source}_documents"
    timed(settings, selection)  # warm-up: the first run in a process also loads the definitions
    baseline, _ = timed(settings, selection)
    to_2019, _ = timed(settings.evolve(snapshot_release="2019-03"), selection)
    back, run_id = timed(settings, selection)
    print(
        f"{args.source}: nothing new {baseline:.1f} s; to 2019-03 {to_2019:.1f} s ({to_2019 / baseline:.2f}x); "
        f"back to today's {back:.1f} s ({back / baseline:.2f}x)"
    )
    shown = figures(run_id, f"{args.source}_release")
    print("churn figures (2019-03 -> today):", {k: v for k, v in shown.items() if isinstance(v, int)})
    kept, served = sizes(settings, RELEASE_TABLES), sizes(settings, SERVED_TABLES)
    for name, (rows, size) in {**kept, **served}.items():
        print(f"  {name:22s} {rows:>9,d} rows {size / 2**20:8.1f} MiB")
    kept_bytes, served_bytes = sum(s for _, s in kept.values()), sum(s for _, s in served.values())
    print(
        f"release tables {kept_bytes / 2**20:.1f} MiB = {kept_bytes / served_bytes:.2f}x the served tables "
        f"({served_bytes / 2**20:.1f} MiB)"
    )


if __name__ == "__main__":
    main()
