"""Cold vs warm materialization of the index group (chunks → embeddings → HNSW) in one process.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/index_incremental.py --reset

With --reset the database's chunks are deleted first, so the first run is cold (everything chunked and embedded);
the second run sees no change and must embed 0 chunks. Prints both wall times and their ratio. Without --reset
both runs are warm. Point it at a scratch database: --reset throws away that database's chunks and vectors.
"""

from __future__ import annotations

import argparse
import time

import dagster as dg
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection

SELECTION = "key:postgres_schema or group:index"


def embedded_in_latest_run() -> int:
    with dg.DagsterInstance.get() as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("chunk_embeddings"))
        return int(event.asset_materialization.metadata["chunks_embedded"].value)  # type: ignore[union-attr]


def timed_run() -> tuple[float, int]:
    start = time.perf_counter()
    outcome = materialize_selection(get_settings(), SELECTION)
    if not outcome.success:
        raise SystemExit(f"run {outcome.run_id} failed")
    return time.perf_counter() - start, embedded_in_latest_run()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reset", action="store_true", help="delete all chunks first (cold first run)")
    args = parser.parse_args()
    settings = get_settings()
    if args.reset:
        with engine_for(settings.platform_database_url).begin() as conn:
            conn.execute(text("DELETE FROM chunks"))
            conn.execute(text("UPDATE documents SET chunked_key = NULL"))
    first_s, first_n = timed_run()
    second_s, second_n = timed_run()
    print(f"{'first run':<12}{first_s:>9.1f} s  {first_n:>7} chunks embedded")
    print(f"{'second run':<12}{second_s:>9.1f} s  {second_n:>7} chunks embedded  ({second_s / first_s:.3f}x)")


if __name__ == "__main__":
    main()
