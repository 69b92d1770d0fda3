"""ClinVar on the real stack: the demo load (associations and conditions from the demo file, its three bad rows
quarantined with their reasons, a second load that changes nothing), the graph's Disease nodes and ASSOCIATED_WITH
edges, the dbt mart; a changed release replacing the set and a truncated one stopped by its churn check (in a
database of their own: a replaced ClinVar set on the shared demo would change every condition answer after it); and,
with the shared snapshot, the real file's load figures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest
from psycopg import sql
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.defs.materialize import materialize_selection
from dagster_project.ops.instance import render_dagster_home
from dagster_project.sources.clinvar.normalizer import diseases_of, place_associations
from dagster_project.sources.clinvar.parser import parse_clinvar
from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull
from dagster_project.stack.postgres import admin_conninfo, ensure_databases

DEMO = Path(__file__).resolve().parents[2] / "dagster_project" / "sources" / "demo_data"
LOAD = " or ".join(
    [
        "key:postgres_schema",
        *(f"key:{source}_{stage}" for source in ("hgnc", "clinvar") for stage in ("raw", "release", "documents")),
    ]
)
CLINVAR_ONLY = "key:clinvar_release or key:clinvar_documents"  # the test writes the raw pull itself
REASONS = {
    "row without a gene symbol (AssociatedGenes and RelatedGenes both empty)",
    "row has 6 fields, the header 9: a truncated or re-wrapped line",
    "gene H19-ICR (NCBI Gene 105259599) is not in HGNC",
}


def _rows(settings: FluxSettings, query: str, **params: object) -> list[tuple[Any, ...]]:
    with engine_for(settings.platform_database_url).connect() as conn:
        return [tuple(r) for r in conn.execute(text(query), params)]


def _count(settings: FluxSettings, query: str, **params: object) -> int:
    return int(_rows(settings, query, **params)[0][0])


def _metadata(settings: FluxSettings, run_id: str, asset: str) -> dict[str, Any]:
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    found = [r.event_log_entry.asset_materialization for r in records]
    (materialization,) = [m for m in found if m and m.asset_key.to_user_string() == asset]
    return {k: v.value for k, v in materialization.metadata.items()}


def _check(settings: FluxSettings, run_id: str, asset: str) -> dg.AssetCheckEvaluation:
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]  # type: ignore[union-attr]
    (found,) = [e for e in evaluations if e.asset_key.to_user_string() == asset]
    return found


def _table_state(settings: FluxSettings) -> list[tuple[Any, ...]]:
    return _rows(
        settings,
        "SELECT hgnc_id, concept_id, source_name, row_hash, updated_at, dataset_version"
        " FROM disease_associations UNION ALL SELECT concept_id, name, '', row_hash, updated_at,"
        " dataset_version FROM diseases ORDER BY 1, 2, 3",
    )


def _expected_demo() -> tuple[int, int, int, int]:
    """(associations, genes, diseases, quarantined) the demo file yields, placed on the demo's HGNC genes."""
    parsed = parse_clinvar((DEMO / "clinvar" / "gene_condition_source_id.txt").read_bytes(), "demo")
    genes = parse_hgnc((DEMO / "hgnc" / "hgnc_complete_set.txt").read_bytes(), "demo").genes
    placed, unplaced = place_associations(parsed.associations, genes)
    return (
        len(placed),
        len({a.hgnc_id for a in placed}),
        len(diseases_of(placed, parsed.associations)),
        len(parsed.quarantined) + len(unplaced),
    )


def test_the_demo_load_holds_the_file_s_associations_and_quarantines_its_bad_rows(demo_platform: FluxSettings) -> None:
    s = demo_platform
    assert _expected_demo() == (61, 53, 54, 3)  # 63 real rows, one of them three times over; 3 bad rows
    assert _count(s, "SELECT count(*) FROM disease_associations") == 61
    assert _count(s, "SELECT count(DISTINCT hgnc_id) FROM disease_associations") == 53
    assert _count(s, "SELECT count(*) FROM diseases") == 54
    assert _rows(s, "SELECT relation, count(*) FROM disease_associations GROUP BY 1 ORDER BY 1") == [
        ("associated", 53),
        ("related", 8),
    ]
    assert _count(s, "SELECT count(*) FROM disease_associations WHERE dataset_version IS NULL") == 0
    quarantined = _rows(s, "SELECT record_key, reason FROM quarantine WHERE source = 'clinvar' ORDER BY 1")
    assert {reason for _, reason in quarantined} == REASONS and len(quarantined) == 3
    tp53 = _rows(
        s,
        "SELECT a.gene_symbol, a.relation, a.last_updated::text, d.name FROM disease_associations a"
        " JOIN diseases d USING (concept_id) WHERE a.hgnc_id = 'HGNC:11998' AND a.concept_id = 'C0006142'"
        " AND a.source_name = 'NCBI curation'",
    )
    assert tp53 == [("TP53", "related", "2021-01-21", "Malignant tumor of breast")]
    assert _rows(s, "SELECT name, mondo_id, omim_id FROM diseases WHERE concept_id = 'C3281192'") == [
        ("Infantile cerebellar-retinal degeneration", "MONDO:0013802", "614559")
    ]


def test_a_second_load_changes_nothing(demo_platform: FluxSettings) -> None:
    s = demo_platform
    before, quarantine = _table_state(s), _count(s, "SELECT count(*) FROM quarantine WHERE source = 'clinvar'")
    again = materialize_selection(s, "key:clinvar_documents")
    assert again.success and again.checks_passed == again.checks_total == 2, again
    meta = _metadata(s, again.run_id, "clinvar_documents")
    assert (
        meta["associations_parsed"],
        meta["associations_placed"],
        meta["quarantined"],
        meta["genes_placed"],
        meta["diseases"],
    ) == (64, 61, 3, 53, 54)
    changes = {k: v for k, v in meta.items() if k.endswith(("_inserted", "_updated", "_deleted"))}
    assert changes and set(changes.values()) == {0}, changes
    assert meta["associations_unchanged"] == 61 and meta["diseases_unchanged"] == 54
    assert _table_state(s) == before
    assert _count(s, "SELECT count(*) FROM quarantine WHERE source = 'clinvar'") == quarantine


def test_the_graph_holds_one_edge_per_asserting_source_and_drops_what_postgres_dropped(
    demo_platform: FluxSettings,
) -> None:
    s, driver = demo_platform, graph_driver(demo_platform)

    def graph(query: str) -> list[dict[str, Any]]:
        return [r.data() for r in driver.execute_query(query).records]

    assert graph("MATCH (d:Disease) RETURN count(d) AS n") == [{"n": 54}]
    assert graph("MATCH (:Gene)-[r:ASSOCIATED_WITH]->(:Disease) RETURN count(r) AS n") == [{"n": 61}]
    edge = graph(
        "MATCH (:Gene {id: 'HGNC:11998'})-[r:ASSOCIATED_WITH {source: 'NCBI curation'}]->"
        "(d:Disease {id: 'C0006142'}) RETURN r.relation AS relation, toString(r.last_updated) AS day,"
        " d.name AS name"
    )
    assert edge == [{"relation": "related", "day": "2021-01-21", "name": "Malignant tumor of breast"}]
    # One condition asserted by two sources for one gene: two edges between the same two nodes.
    pairs = graph(
        "MATCH (g:Gene)-[r:ASSOCIATED_WITH]->(d:Disease) WITH g, d, count(r) AS n WHERE n > 1 RETURN count(*) AS pairs"
    )
    assert pairs[0]["pairs"] > 0
    unchanged = materialize_selection(s, "key:knowledge_graph")
    assert unchanged.success and _metadata(s, unchanged.run_id, "knowledge_graph")["unchanged"] is True

    # A row gone from Postgres takes its edge, and a condition left with no edge, out of the graph.
    lone = _rows(
        s,
        "SELECT hgnc_id, concept_id, source_name FROM disease_associations WHERE concept_id IN ("
        "SELECT concept_id FROM disease_associations GROUP BY 1 HAVING count(*) = 1) ORDER BY 2 LIMIT 1",
    )[0]
    engine = engine_for(s.platform_database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text("DELETE FROM disease_associations WHERE (hgnc_id, concept_id, source_name) = (:g, :c, :s)"),
                {"g": lone[0], "c": lone[1], "s": lone[2]},
            )
            conn.execute(text("DELETE FROM diseases WHERE concept_id = :c"), {"c": lone[1]})
        pruned = materialize_selection(s, "key:knowledge_graph")
        assert pruned.success and pruned.checks_passed == pruned.checks_total, pruned
        meta = _metadata(s, pruned.run_id, "knowledge_graph")
        assert (meta["pruned_ASSOCIATED_WITH"], meta["pruned_Disease"]) == (1, 1)
        assert graph(f"MATCH (d:Disease {{id: '{lone[1]}'}}) RETURN count(d) AS n") == [{"n": 0}]
        assert graph("MATCH (:Gene)-[r:ASSOCIATED_WITH]->(:Disease) RETURN count(r) AS n") == [{"n": 60}]
    finally:
        restored = materialize_selection(s, "key:clinvar_documents or key:knowledge_graph")
    assert restored.success
    assert _metadata(s, restored.run_id, "clinvar_documents")["associations_inserted"] == 1  # the file still has it
    assert graph("MATCH (:Gene)-[r:ASSOCIATED_WITH]->(:Disease) RETURN count(r) AS n") == [{"n": 61}]


def test_the_dbt_mart_has_one_row_per_condition_and_gene(demo_platform: FluxSettings) -> None:
    s = demo_platform
    pairs = _count(s, "SELECT count(DISTINCT (concept_id, hgnc_id)) FROM disease_associations")
    assert _count(s, "SELECT count(*) FROM analytics.disease_genes") == pairs
    assert _count(s, "SELECT count(*) FROM analytics.stg_disease_associations") == 61
    merged = _rows(
        s,
        "SELECT symbol, relation, source_count, sources FROM analytics.disease_genes"
        " WHERE source_count > 1 ORDER BY disease_gene_id LIMIT 1",
    )
    assert merged and merged[0][2] == len(merged[0][3].split(", "))
    assert _count(s, "SELECT count(*) FROM analytics.disease_genes WHERE sources LIKE '%unspecified%'") > 0


@pytest.fixture
def clinvar_db(stack: FluxSettings, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[FluxSettings]:
    """A database and raw zone of the test's own, holding HGNC and ClinVar only."""
    database = f"{stack.postgres.pg_database}_cv_{request.node.name[5:17]}"
    settings = stack.evolve(pg_database=database, source_mode="demo", raw_root=str(tmp_path / "raw"))
    ensure_databases(settings)
    yield settings
    engine_for.cache_clear()  # pooled connections would block DROP DATABASE
    with psycopg.connect(admin_conninfo(stack), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


def _write_clinvar(settings: FluxSettings, lines: list[str], release: str) -> None:
    write_pull(
        RawPull("clinvar", {"gene_condition_source_id.txt": ("\n".join(lines) + "\n").encode()}, release=release),
        settings.raw_root_path,
    )


def test_a_new_release_replaces_the_set_and_a_truncated_one_is_stopped(clinvar_db: FluxSettings) -> None:
    s = clinvar_db
    first = materialize_selection(s, LOAD)
    assert first.success and first.checks_passed == first.checks_total, first
    manifest = latest_manifest("clinvar", s.raw_root_path)
    lines = load_files(manifest, s.raw_root_path)["gene_condition_source_id.txt"].decode().splitlines()
    header, rows = lines[0], lines[1:]
    # ACO2's only condition leaves the file; AKT1's row is updated by NCBI.
    gone = [r for r in rows if r.startswith("50\t")]
    changed = next(r for r in rows if r.startswith("207\t"))
    newer = [changed.rsplit("\t", 1)[0] + "\t02 Feb 2026" if r == changed else r for r in rows if r not in gone]
    _write_clinvar(s, [header, *newer], "ClinVar demo, one condition gone")
    updated = materialize_selection(s, CLINVAR_ONLY)
    assert updated.success and updated.checks_passed == updated.checks_total, updated
    release = _metadata(s, updated.run_id, "clinvar_release")
    assert (release["associations_removed"], release["associations_added"], release["diseases_removed"]) == (
        len(gone),
        0,
        1,
    )
    meta = _metadata(s, updated.run_id, "clinvar_documents")
    assert (meta["associations_deleted"], meta["associations_updated"], meta["associations_inserted"]) == (
        len(gone),
        1,
        0,
    )
    assert meta["diseases_deleted"] == 1
    assert _count(s, "SELECT count(*) FROM disease_associations WHERE entrez_id = '50'") == 0
    assert _rows(s, "SELECT max(last_updated)::text FROM disease_associations WHERE entrez_id = '207'") == [
        ("2026-02-02",)
    ]
    assert _count(
        s, "SELECT count(*) FROM release_changes WHERE source = 'clinvar' AND change_kind = 'association_removed'"
    ) == len(gone)

    served = _table_state(s)
    _write_clinvar(s, [header, *newer[:10]], "ClinVar demo, cut short")
    blocked = materialize_selection(s, CLINVAR_ONLY)
    assert not blocked.success and blocked.materialized == ["clinvar_release"], "the documents load must not run"
    check = _check(s, blocked.run_id, "clinvar_release")
    assert not check.passed and check.blocking
    assert "of its gene-condition associations" in (check.description or "")
    assert "FLUX_CHURN_MAX_ASSOCIATIONS_LOST" in (check.description or "")
    assert _table_state(s) == served, "the previous release keeps serving"


@pytest.mark.shared_data
@pytest.mark.slow
def test_the_snapshot_file_loads_with_its_measured_figures(clinvar_db: FluxSettings) -> None:
    s = clinvar_db.evolve(source_mode="snapshot")
    if not Path(s.sources.snapshot_dir, "clinvar", "gene_condition_source_id.txt").is_file():
        pytest.skip(f"no ClinVar file under {s.sources.snapshot_dir}")
    first = materialize_selection(s, LOAD)
    assert first.success and first.checks_passed == first.checks_total, first
    meta = _metadata(s, first.run_id, "clinvar_documents")
    assert (
        meta["associations_parsed"],
        meta["associations_placed"],
        meta["associations_not_placed"],
        meta["genes_placed"],
        meta["diseases"],
        meta["quarantined"],
    ) == (12_776, 12_226, 18, 4_989, 7_372, 22)
    reasons = dict(
        _rows(
            s,
            "SELECT CASE WHEN reason LIKE '%is not in HGNC' THEN 'not in HGNC'"
            " WHEN reason LIKE '%withdrawn entry%' THEN 'withdrawn' ELSE reason END, count(*)"
            " FROM quarantine WHERE source = 'clinvar' GROUP BY 1",
        )
    )
    # Rows that share a quarantine key and reason (one gene and condition under two sources; CHD7's two rows
    # without a concept) are one entry each: 22 rows, 19 entries.
    assert reasons == {
        "row without a MedGen concept id (a condition is keyed by it)": 3,
        "not in HGNC": 13,
        "withdrawn": 3,
    }
    assert _count(s, "SELECT count(*) FROM disease_associations") == 12_226
    assert _count(s, "SELECT count(*) FROM diseases WHERE mondo_id IS NOT NULL") == 6_486
    release = _metadata(s, first.run_id, "clinvar_release")
    assert release["newly_kept"] is True and release["compared_with"] == "none"
    state = _table_state(s)
    again = materialize_selection(s, LOAD)
    assert again.success
    changes = {
        k: v
        for k, v in _metadata(s, again.run_id, "clinvar_documents").items()
        if k.endswith(("_inserted", "_updated", "_deleted"))
    }
    assert set(changes.values()) == {0}, changes
    assert _table_state(s) == state
