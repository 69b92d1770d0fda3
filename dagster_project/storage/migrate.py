"""Versioned, ordered, idempotent schema migrations for Postgres and Neo4j.

Files live in dagster_project/storage/migrations/{postgres,neo4j}/NNNN_name.{sql,cypher}. Each applied migration is
recorded with the checksum of its file; applying again is a no-op, and an applied file that was edited since is
refused (write a new migration instead). Placeholders like {embedding_dim} are integers from settings.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxConfigError, FluxSettings

if TYPE_CHECKING:
    from neo4j import Driver

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.(sql|cypher)$")
# Any two concurrent migrators (two Dagster runs, a test and a CLI) serialize on this advisory lock.
_PG_LOCK_KEY = 0x464C5558
_PLACEHOLDER = re.compile(r"\{(embedding_dim|hnsw_m|hnsw_ef_construction|serving_role|serving_password)\}")


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def render(self, settings: FluxSettings) -> str:
        params = {
            "embedding_dim": int(settings.index.embedding_dim),
            "hnsw_m": int(settings.index.hnsw_m),
            "hnsw_ef_construction": int(settings.index.hnsw_ef_construction),
            "serving_role": settings.serving.serving_role,  # validated as an identifier by the settings
            "serving_password": settings.serving.serving_password.get_secret_value().replace("'", "''"),
        }
        # Only the known placeholders are replaced, so literal braces ('{}'::jsonb) survive.
        return _PLACEHOLDER.sub(lambda m: str(params[m.group(1)]), self.path.read_text())


@dataclass
class MigrationReport:
    store: str
    applied: list[str] = field(default_factory=list)
    already_applied: list[str] = field(default_factory=list)

    @property
    def current_version(self) -> int:
        names = self.applied + self.already_applied
        return max((int(n.split("_", 1)[0]) for n in names), default=0)


def load_migrations(kind: str, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Migrations of one store in version order; refuses gaps, duplicates and badly named files."""
    suffix = {"postgres": "sql", "neo4j": "cypher"}[kind]
    found: list[Migration] = []
    for path in sorted((directory / kind).iterdir()):
        if path.name.startswith("."):
            continue
        match = _NAME.match(path.name)
        if not match or match.group(3) != suffix:
            raise MigrationError(f"migration file name must be NNNN_name.{suffix}: {path.name}")
        found.append(Migration(int(match.group(1)), match.group(2), path))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise MigrationError(f"{kind} migrations must be numbered 1..N without gaps, found {versions}")
    return found


def split_statements(script: str) -> list[str]:
    """Split a Cypher script on ';' at line ends, dropping // comments (Cypher runs one statement per query)."""
    lines = [ln for ln in script.splitlines() if not ln.strip().startswith("//")]
    return [stmt.strip() for stmt in "\n".join(lines).split(";") if stmt.strip()]


def apply_postgres(engine: Engine, settings: FluxSettings, directory: Path = MIGRATIONS_DIR) -> MigrationReport:
    report = MigrationReport("postgres")
    migrations = load_migrations("postgres", directory)
    with engine.begin() as conn:
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        conn.execute(
            text(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
        )
        recorded = {row.version: row for row in conn.execute(text("SELECT * FROM schema_migrations"))}
        for migration in migrations:
            label = f"{migration.version:04d}_{migration.name}"
            row = recorded.get(migration.version)
            if row is not None:
                if row.checksum != migration.checksum:
                    raise MigrationError(
                        f"postgres migration {label} was edited after it was applied; add a new migration instead"
                    )
                report.already_applied.append(label)
                continue
            # exec_driver_sql with no parameters uses the simple protocol, so a file may hold many statements.
            conn.exec_driver_sql(migration.render(settings))
            conn.execute(
                text("INSERT INTO schema_migrations (version, name, checksum) VALUES (:v, :n, :c)"),
                {"v": migration.version, "n": migration.name, "c": migration.checksum},
            )
            report.applied.append(label)
        _check_vector_dimension(conn, settings)
    return report


def _check_vector_dimension(conn, settings: FluxSettings) -> None:  # type: ignore[no-untyped-def]
    column_type = conn.execute(
        text(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
        )
    ).scalar_one()
    expected = f"vector({settings.index.embedding_dim})"
    if column_type != expected:
        raise FluxConfigError(
            "FLUX_EMBEDDING_DIM",
            f"chunks.embedding is {column_type} but the configured model needs {expected}; "
            "re-create the vector column (flux db reset-vectors) before switching dimension",
        )


def apply_neo4j(driver: Driver, settings: FluxSettings, directory: Path = MIGRATIONS_DIR) -> MigrationReport:
    report = MigrationReport("neo4j")
    migrations = load_migrations("neo4j", directory)
    recorded = {
        rec["version"]: rec["checksum"]
        for rec in driver.execute_query(
            "MATCH (m:FluxMigration) RETURN m.version AS version, m.checksum AS checksum"
        ).records
    }
    for migration in migrations:
        label = f"{migration.version:04d}_{migration.name}"
        if migration.version in recorded:
            if recorded[migration.version] != migration.checksum:
                raise MigrationError(
                    f"neo4j migration {label} was edited after it was applied; add a new migration instead"
                )
            report.already_applied.append(label)
            continue
        # Schema commands cannot share a transaction with data writes in Neo4j: one auto-commit each.
        for statement in split_statements(migration.render(settings)):
            driver.execute_query(statement)
        driver.execute_query(
            "MERGE (m:FluxMigration {version: $v}) SET m.name = $n, m.checksum = $c, m.applied_at = datetime()",
            v=migration.version,
            n=migration.name,
            c=migration.checksum,
        )
        report.applied.append(label)
    return report
