"""Live mode end to end against a local stand-in for KEGG REST that injects 429s and 5xx: the run succeeds after
retries, writes its raw files, and a second run adds no row, node or quarantine entry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.core.stores import engine_for
from dagster_project.materialize import materialize_selection
from dagster_project.schema import apply_postgres
from tests.support.fault_server import FaultServer, Reply

pytestmark = pytest.mark.shared_data
KEGG = "key:kegg_raw or key:kegg_documents or key:postgres_schema"


def _serve_kegg(server: FaultServer, fixtures: Path) -> None:
    rest = fixtures / "kegg_rest"
    server.default("/info/pathway", Reply.ok("path             Release 112.0+/11-30, Nov 24\n"))
    server.default("/list/pathway/hsa", Reply.ok((rest / "hsa.txt").read_text()))
    server.default("/link/hsa/pathway", Reply.ok((rest / "pathway_gene.txt").read_text()))
    server.default("/link/compound/pathway", Reply.ok("path:map00010\tcpd:C00022\npath:map00010\tcpd:BROKEN\n"))
    server.default("/conv/uniprot/hsa", Reply.ok("hsa:10327\tup:O14556\n"))
    server.default("/get/hsa00010", Reply.ok((rest / "path_hsa00010.txt").read_text()))


@pytest.fixture
def live_kegg(stack: FluxSettings, fault_server: FaultServer, tmp_path: Path) -> Iterator[FluxSettings]:
    fixtures = Path(stack.sources.snapshot_dir) / "fixtures"
    if not fixtures.is_dir():
        pytest.skip(f"recorded fixtures not found under {fixtures}")
    _serve_kegg(fault_server, fixtures)
    apply_postgres(engine_for(stack.platform_database_url), stack)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {"FLUX_SOURCE_MODE": "live", "FLUX_KEGG_URL": fault_server.url,
                           "FLUX_RAW_ROOT": str(tmp_path / "raw"), "FLUX_LIVE_MAX_PATHWAYS": "1",
                           "FLUX_HTTP_MAX_ATTEMPTS": "3", "FLUX_HTTP_TIMEOUT": "2"}.items():
            mp.setenv(key, value)
        get_settings.cache_clear()
        yield get_settings()
    get_settings.cache_clear()
    # Leave KEGG as the snapshot had it for any later test.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLUX_SOURCE_MODE", "snapshot")
        mp.setenv("FLUX_RAW_ROOT", str(tmp_path / "raw-restore"))
        get_settings.cache_clear()
        materialize_selection(get_settings(), KEGG)
    get_settings.cache_clear()


def _counts(settings: FluxSettings) -> dict[str, int]:
    queries = {
        "kegg_documents": "SELECT count(*) FROM documents WHERE source = 'kegg' AND status = 'active'",
        "kegg_pathways": "SELECT count(*) FROM pathways WHERE source = 'kegg' AND status = 'active'",
        "members": "SELECT count(*) FROM pathway_members m JOIN pathways p USING (pathway_id) WHERE p.source = 'kegg'",
        "quarantine": "SELECT count(*) FROM quarantine WHERE source = 'kegg'",
        "live_pulls": "SELECT count(*) FROM raw_pulls WHERE source = 'kegg' AND mode = 'live'",
    }
    with engine_for(settings.platform_database_url).connect() as conn:
        return {name: conn.execute(text(sql)).scalar_one() for name, sql in queries.items()}


def test_live_pull_with_injected_faults_is_retried_and_never_duplicates(
    live_kegg: FluxSettings, fault_server: FaultServer
) -> None:
    before = _counts(live_kegg)["live_pulls"]
    fault_server.script("/list/pathway/hsa", Reply.error(429, retry_after="0"), Reply.error(503))
    first = materialize_selection(live_kegg, KEGG)
    assert first.success, first
    assert len(fault_server.hits("/list/pathway/hsa")) == 3  # 429, 503, then the recorded answer
    after_first = _counts(live_kegg)

    fault_server.script("/get/hsa00010", Reply.error(500))
    second = materialize_selection(live_kegg, KEGG)
    assert second.success, second
    after_second = _counts(live_kegg)

    assert after_first["kegg_documents"] == after_first["kegg_pathways"] == 9
    # The second pull got the same files and release after its retries: nothing new is recorded.
    assert after_first["live_pulls"] == before + 1 and after_second["live_pulls"] == before + 1
    for key in ("kegg_documents", "kegg_pathways", "members", "quarantine"):
        assert after_second[key] == after_first[key], key
    with engine_for(live_kegg.platform_database_url).connect() as conn:
        reason = conn.execute(text("SELECT reason FROM quarantine WHERE source = 'kegg'"
                                   " AND record_key LIKE '%BROKEN'")).scalar_one()
    assert reason == "unrecognised link target"
