"""Backup and restore: the demo platform is backed up, restored into a fresh stack this test starts (its own
Postgres, Neo4j and Redis on free ports under tmp_path), its graph re-projected, every table and the graph
verified against the backup's checksums, and the same questions get the same answers with the same citations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.backup import BackupError, backup, restore
from dagster_project.core.settings import FluxSettings
from dagster_project.stack import Stack
from retrieval.cache import Cache
from retrieval.pipeline import Pipeline
from tests.support.ports import free_port

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-resilience`.
pytestmark = pytest.mark.resilience

QUESTIONS = ["Which genes do the KEGG and Reactome apoptosis pathways share?",
             "What does TP53 do in apoptosis?"]


@pytest.fixture
def fresh_stack(demo_platform: FluxSettings, tmp_path: Path) -> Iterator[FluxSettings]:
    """The demo's configuration on new ports, home and database names: a second machine restoring the backup.
    (The graph re-projection recomputes the resolution, so the embedding settings must match for the name
    cosines to agree to the last bit.)"""
    settings = demo_platform.evolve(
        home=tmp_path / "fresh", pg_port=free_port(), neo4j_bolt_port=free_port(), redis_port=free_port(),
        pg_database="flux_restored", raw_root=str(tmp_path / "fresh" / "raw"))
    services = Stack(settings)
    try:
        services.up()
        yield settings
    finally:
        for service in services.services:
            service.stop()


def _answers(settings: FluxSettings) -> list[tuple[str, list[str], str]]:
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    answers = [pipeline.ask(q, "quick") for q in QUESTIONS]
    return [(a.answer, [c.id for c in a.citations], a.index_version or "") for a in answers]


@pytest.mark.timeout(900)
def test_a_backup_restores_into_a_fresh_stack_and_answers_the_same(demo_platform: FluxSettings,
                                                                    fresh_stack: FluxSettings,
                                                                    tmp_path: Path) -> None:
    target = tmp_path / "backup"
    manifest = backup(demo_platform, target)
    assert {p.name for p in target.glob("*.dump")} == {"platform.dump", "dagster.dump", "mlflow.dump"}
    assert manifest["bm25"] and len(manifest["tables"]) >= 15 and manifest["graph"]  # type: ignore[arg-type]
    with pytest.raises(BackupError, match="not empty"):
        backup(demo_platform, target)

    report = restore(fresh_stack, target)
    assert report.ok, report
    assert report.tables_matching == len(manifest["tables"])  # type: ignore[arg-type]
    with pytest.raises(BackupError, match="already holds"):
        restore(fresh_stack, target)

    expected = _answers(demo_platform)
    assert all(citations for _, citations, _ in expected)
    assert _answers(fresh_stack) == expected
