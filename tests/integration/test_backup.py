"""Backup and restore: the demo platform is backed up, restored into a fresh stack this module starts (its own
Postgres, Neo4j and Redis on free ports), its graph re-projected, every table and the graph verified against the
backup's checksums, and the same questions get the same answers with the same citations. A backup whose manifest
was changed after it was written is restored by `flux restore` into new databases of that stack and exits 1
naming the table: a restore that re-projects the graph needs a Neo4j of its own, never the session's."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.materialize import MaterializeOutcome, graph_reprojector
from dagster_project.ops.backup import BackupError, backup, restore
from dagster_project.stack import Stack
from retrieval.caching.cache import Cache
from retrieval.pipeline import Pipeline
from tests.support.cli import flux
from tests.support.ports import free_port

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-extended`.
pytestmark = pytest.mark.resilience

QUESTIONS = ["Which genes do the KEGG and Reactome apoptosis pathways share?", "What does TP53 do in apoptosis?"]


@pytest.fixture(scope="module")
def fresh_stack(demo_platform: FluxSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FluxSettings]:
    """The demo's configuration on new ports, home and database names: a second machine restoring the backup.
    (The graph re-projection recomputes the resolution, so the embedding settings must match for the name
    cosines to agree to the last bit.)"""
    home = tmp_path_factory.mktemp("fresh")
    settings = demo_platform.evolve(
        home=home,
        pg_port=free_port(),
        neo4j_bolt_port=free_port(),
        redis_port=free_port(),
        pg_database="flux_restored",
        raw_root=str(home / "raw"),
    )
    services = Stack(settings)
    try:
        services.up()
        yield settings
    finally:
        for service in services.services:
            service.stop()


@pytest.fixture(scope="module")
def demo_backup(
    demo_platform: FluxSettings, demo_scorecards: MaterializeOutcome, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A backup of the demo as `make run` leaves it: its scorecards' rows (eval_runs) included."""
    target = tmp_path_factory.mktemp("backup") / "demo"
    manifest = backup(demo_platform, target)
    assert {p.name for p in target.glob("*.dump")} == {"platform.dump", "dagster.dump", "mlflow.dump"}
    assert manifest["bm25"] and len(manifest["tables"]) >= 15 and manifest["graph"]  # type: ignore[arg-type]
    return target


def _answers(settings: FluxSettings) -> list[tuple[str, list[str], str]]:
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    answers = [pipeline.ask(q, "quick") for q in QUESTIONS]
    return [(a.answer, [c.id for c in a.citations], a.index_version or "") for a in answers]


def _environment(settings: FluxSettings, **databases: str) -> dict[str, str]:
    """The FLUX_ variables a user would export to point `flux` at this stack, with new database names."""
    names = {
        "home": settings.home,
        "pg_port": settings.postgres.pg_port,
        "neo4j_bolt_port": settings.graph.neo4j_bolt_port,
        "redis_port": settings.cache.redis_port,
        "raw_root": settings.sources.raw_root,
        "source_mode": settings.sources.source_mode,
        "embedding_batch_size": settings.index.embedding_batch_size,
        **databases,
    }
    return {f"FLUX_{name.upper()}": str(value) for name, value in names.items()}


@pytest.mark.timeout(900)
def test_a_backup_restores_into_a_fresh_stack_and_answers_the_same(
    demo_platform: FluxSettings, fresh_stack: FluxSettings, demo_backup: Path
) -> None:
    with pytest.raises(BackupError, match="not empty"):
        backup(demo_platform, demo_backup)
    manifest = json.loads((demo_backup / "manifest.json").read_text())

    report = restore(fresh_stack, demo_backup, graph_reprojector(fresh_stack))
    assert report.ok, report
    assert report.tables_matching == len(manifest["tables"])
    with pytest.raises(BackupError, match="already holds"):
        restore(fresh_stack, demo_backup, graph_reprojector(fresh_stack))

    expected = _answers(demo_platform)
    assert all(citations for _, citations, _ in expected)
    assert _answers(fresh_stack) == expected


@pytest.mark.timeout(900)
def test_restore_of_a_backup_whose_manifest_was_tampered_exits_1_naming_the_table(
    fresh_stack: FluxSettings, demo_backup: Path, tmp_path: Path
) -> None:
    tampered = tmp_path / "backup"
    shutil.copytree(demo_backup, tampered)
    manifest = json.loads((tampered / "manifest.json").read_text())
    rows = manifest["tables"]["eval_runs"]["rows"]
    assert rows > 0  # the demo's scorecards ran
    manifest["tables"]["eval_runs"]["rows"] = rows + 1
    (tampered / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    suffix = uuid.uuid4().hex[:8]
    env = _environment(
        fresh_stack,
        pg_database=f"flux_tampered_{suffix}",
        dagster_database=f"flux_tampered_dagster_{suffix}",
        mlflow_database=f"flux_tampered_mlflow_{suffix}",
    )
    result = flux("restore", str(tampered), env=env)
    assert result.code == 1, result.stderr
    assert result.flux_lines == ["flux: restored state differs from the backup: table eval_runs"], result.stderr
    assert (
        f"restored dagster, mlflow, platform and {len(manifest['bm25'])} BM25 index(es);"
        f" {len(manifest['tables']) - 1} tables match the backup; graph matches"
    ) in result.printed
