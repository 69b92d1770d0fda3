"""The knowledge graph and the resolution on the demo platform: idempotent loads, MERGE on ids, vector search."""

from __future__ import annotations

import dagster as dg
from neo4j import Driver
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.defs.materialize import MaterializeOutcome, materialize_selection
from dagster_project.evals.store import SCORECARDS
from dagster_project.graph import loader
from dagster_project.index.encoder import load_sentence_model
from dagster_project.ops.instance import render_dagster_home
from tests.support.demo_lexicons import demo_pathway_count

GRAPH = "group:graph"


def _driver(settings: FluxSettings) -> Driver:
    return graph_driver(settings)


def test_loading_twice_yields_identical_counts(demo_platform: FluxSettings) -> None:
    before = loader.graph_counts(_driver(demo_platform))
    assert before[0]["Pathway"] == demo_pathway_count() and before[0]["Species"] == 1
    assert {"HAS_MEMBER", "SUBPATHWAY_OF", "IN_SPECIES", "MENTIONS", "EQUIVALENT_TO"} <= set(before[1])
    outcome = materialize_selection(demo_platform, GRAPH)
    assert outcome.success and outcome.checks_passed == outcome.checks_total
    assert loader.graph_counts(_driver(demo_platform)) == before


def test_a_renamed_pathway_updates_its_node(demo_platform: FluxSettings) -> None:
    engine = engine_for(demo_platform.platform_database_url)
    with engine.begin() as conn:
        old = conn.execute(
            text(
                "UPDATE pathways SET name = 'Glycolysis (renamed)' WHERE pathway_id = 'R-HSA-70171'"
                " RETURNING (SELECT name FROM pathways WHERE pathway_id = 'R-HSA-70171')"
            )
        ).scalar()
    try:
        assert materialize_selection(demo_platform, "key:knowledge_graph").success
        records = (
            _driver(demo_platform).execute_query("MATCH (p:Pathway {id: 'R-HSA-70171'}) RETURN p.name AS name").records
        )
        assert [r["name"] for r in records] == ["Glycolysis (renamed)"]
    finally:
        with engine.begin() as conn:
            conn.execute(text("UPDATE pathways SET name = :n WHERE pathway_id = 'R-HSA-70171'"), {"n": old})
        materialize_selection(demo_platform, "key:knowledge_graph")


def test_a_duplicate_id_merges_into_one_node(demo_platform: FluxSettings) -> None:
    driver = _driver(demo_platform)
    row = {
        "id": "R-HSA-0000001",
        "source": "reactome",
        "name": "Probe",
        "species": "Homo sapiens",
        "category": "",
        "subcategory": "",
    }
    try:
        loader.run_batched(driver, loader.MERGE_PATHWAYS, [row, {**row, "name": "Probe again"}])
        records = driver.execute_query("MATCH (p:Pathway {id: 'R-HSA-0000001'}) RETURN p.name AS name").records
        assert [r["name"] for r in records] == ["Probe again"]
        species = driver.execute_query("MATCH (s:Species) RETURN count(s) AS n").records[0]["n"]
        assert species == 1
    finally:
        driver.execute_query("MATCH (p:Pathway {id: 'R-HSA-0000001'}) DETACH DELETE p")


def test_vector_query_finds_each_pathway_by_its_own_title(demo_platform: FluxSettings) -> None:
    driver = _driver(demo_platform)
    pathways = driver.execute_query(
        "MATCH (p:Pathway) WHERE p.embedding IS NOT NULL RETURN p.id AS id, p.name AS name"
    ).records
    model = load_sentence_model(demo_platform.index.embedding_model)
    vectors = model.encode([r["name"] for r in pathways], normalize_embeddings=True)
    top1 = top3 = 0
    for record, vector in zip(pathways, vectors, strict=True):
        hits = driver.execute_query(
            "CALL db.index.vector.queryNodes('pathway_embedding', 3, $v) YIELD node RETURN node.id AS id",
            v=vector.tolist(),
        ).records
        ids = [h["id"] for h in hits]
        top1 += ids[0] == record["id"]
        top3 += record["id"] in ids
    # Near-identical titles exist across sources (Glycolysis / Glycolysis / Gluconeogenesis): the counterpart may
    # come first, so the pathway itself must be in the top 3 and usually first.
    assert len(pathways) == demo_pathway_count()
    assert top3 / len(pathways) >= 0.9 and top1 / len(pathways) >= 0.6, (top1, top3)


def test_demo_counterparts_are_resolved_and_explainable(demo_platform: FluxSettings) -> None:
    with engine_for(demo_platform.platform_database_url).connect() as conn:
        relations = dict(
            conn.execute(text("SELECT reactome_id || '~' || kegg_id, relation FROM pathway_mappings")).all()
        )
    for pair in (
        "R-HSA-70171~hsa00010",
        "R-HSA-71403~hsa00020",
        "R-HSA-109581~hsa04210",
        "R-HSA-5358508~hsa03430",
        "R-HSA-3700989~hsa04115",
    ):
        assert relations[pair] in {"equivalent", "part_of"}, pair
    shared = (
        _driver(demo_platform)
        .execute_query(
            "MATCH (:Pathway {id: 'R-HSA-70171'})-[:HAS_MEMBER]->(g:Gene)<-[:HAS_MEMBER]-(:Pathway {id: 'hsa00010'})"
            " RETURN collect(g.symbol) AS genes"
        )
        .records[0]["genes"]
    )
    assert {"HK1", "GAPDH", "PKM"} <= set(shared)


def test_dbt_mart_matches_the_resolution_and_dbt_build_runs_on_its_own(
    demo_platform: FluxSettings, demo_scorecards: MaterializeOutcome
) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from dagster_project.core.settings import REPO_ROOT, dbt_env

    with engine_for(demo_platform.platform_database_url).connect() as conn:
        resolved = conn.execute(text("SELECT count(*) FROM pathway_mappings WHERE relation <> 'unrelated'")).scalar()
        mart = conn.execute(
            text("SELECT count(*), count(*) FILTER (WHERE shared = shared_in_sql) FROM analytics.pathway_equivalences")
        ).one()
        # The scorecards of the run that recorded them (other tests may record more later) and how many of them the
        # trend mart holds.
        scorecards, trended = conn.execute(
            text(
                "SELECT count(*), count(*) FILTER"
                " (WHERE r.id IN (SELECT eval_run_id FROM analytics.eval_metric_trends))"
                " FROM eval_runs r WHERE r.dagster_run_id = :run"
            ),
            {"run": demo_scorecards.run_id},
        ).one()
    assert resolved > 0 and tuple(mart) == (resolved, resolved)
    # That run built the trend mart after its scorecards wrote eval_runs, so the mart holds all four.
    assert (scorecards, trended) == (len(SCORECARDS), len(SCORECARDS))
    dbt = str(Path(sys.executable).parent / "dbt")
    result = subprocess.run(
        [dbt, "build", "--project-dir", "dbt", "--profiles-dir", "dbt"],
        cwd=REPO_ROOT,
        env={**os.environ, **dbt_env(demo_platform)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert "ERROR=0" in result.stdout and "unit test" in result.stdout


def test_resolution_with_unchanged_inputs_scores_nothing_and_a_lost_edge_is_rescored(
    demo_platform: FluxSettings,
) -> None:
    driver = graph_driver(demo_platform)
    assert materialize_selection(demo_platform, "key:pathway_resolution").success
    again = materialize_selection(demo_platform, "key:pathway_resolution")
    assert again.success and _resolution_metadata(demo_platform, again.run_id)["unchanged"] is True
    edges = driver.execute_query(EDGE_COUNT).records[0]["n"]
    assert edges > 0
    driver.execute_query("MATCH (:Pathway)-[r:EQUIVALENT_TO]->(:Pathway) WITH r LIMIT 1 DELETE r")
    repaired = materialize_selection(demo_platform, "key:pathway_resolution")
    assert _resolution_metadata(demo_platform, repaired.run_id)["unchanged"] is False  # what it wrote is not all there
    assert driver.execute_query(EDGE_COUNT).records[0]["n"] == edges


EDGE_COUNT = "MATCH (:Pathway)-[r:EQUIVALENT_TO|PART_OF]->(:Pathway) RETURN count(r) AS n"


def _resolution_metadata(settings: FluxSettings, run_id: str, asset: str = "pathway_resolution") -> dict[str, object]:
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey(asset))
        assert event and event.run_id == run_id and event.asset_materialization
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_a_graph_load_with_unchanged_inputs_merges_nothing_and_a_lost_node_is_loaded_again(
    demo_platform: FluxSettings,
) -> None:
    driver = graph_driver(demo_platform)
    assert materialize_selection(demo_platform, "key:knowledge_graph").success
    counts = loader.graph_counts(driver)
    again = materialize_selection(demo_platform, "key:knowledge_graph")
    metadata = _resolution_metadata(demo_platform, again.run_id, "knowledge_graph")
    assert again.success and metadata["unchanged"] is True and metadata["rows_gene_members"] == 0
    driver.execute_query("MATCH (g:Gene)<-[:HAS_MEMBER]-(:Pathway) WITH g LIMIT 1 DETACH DELETE g")
    assert loader.graph_counts(driver) != counts
    repaired = materialize_selection(demo_platform, "key:knowledge_graph")
    assert _resolution_metadata(demo_platform, repaired.run_id, "knowledge_graph")["unchanged"] is False
    assert loader.graph_counts(driver) == counts


def test_a_pathway_left_without_members_loses_its_member_edges(demo_platform: FluxSettings) -> None:
    """A release in which a pathway keeps its node but none of its genes (or compounds) are placed: the stale
    HAS_MEMBER edges go, and come back with the members."""
    driver, engine = graph_driver(demo_platform), engine_for(demo_platform.platform_database_url)
    edges = "MATCH (:Pathway {id: $id})-[r:HAS_MEMBER]->() RETURN count(r) AS n"
    with engine.connect() as conn:
        pathway = conn.execute(
            text(
                "SELECT pathway_id FROM pathway_members m JOIN pathways p USING (pathway_id)"
                " WHERE p.source = 'kegg' AND m.member_kind = 'compound' ORDER BY 1 LIMIT 1"
            )
        ).scalar_one()
    assert materialize_selection(demo_platform, "key:knowledge_graph").success
    before = driver.execute_query(edges, id=pathway).records[0]["n"]
    assert before > 0
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM pathway_members WHERE pathway_id = :p"), {"p": pathway})
    try:
        emptied = materialize_selection(demo_platform, "key:knowledge_graph")
        assert emptied.success and emptied.checks_passed == emptied.checks_total
        assert driver.execute_query(edges, id=pathway).records[0]["n"] == 0
    finally:
        assert materialize_selection(demo_platform, "key:kegg_documents").success  # the members again
    assert materialize_selection(demo_platform, "key:knowledge_graph").success
    assert driver.execute_query(edges, id=pathway).records[0]["n"] == before


def test_a_dbt_run_builds_only_the_models_whose_definition_sources_or_relation_changed(
    demo_platform: FluxSettings,
) -> None:
    engine = engine_for(demo_platform.platform_database_url)
    assert materialize_selection(demo_platform, "group:dbt").success  # whatever earlier tests left stale
    again = materialize_selection(demo_platform, "group:dbt")
    assert again.success and again.materialized == [] and again.checks_total == 0
    with engine.connect() as conn:
        genes = conn.execute(text("SELECT count(*) FROM gene_identifiers")).scalar_one()
    for _ in range(2):  # the second reading finds what the first did
        assert materialize_selection(demo_platform, TABLE).materialized == ["postgres/gene_identifiers"]
    unchanged = _table_record(demo_platform, "gene_identifiers")
    assert (unchanged["dagster/row_count"], unchanged["changed"]) == (genes, False), unchanged
    with engine.begin() as conn:
        hgnc_id, name = conn.execute(text("SELECT hgnc_id, name FROM gene_identifiers ORDER BY hgnc_id LIMIT 1")).one()
        conn.execute(text("UPDATE gene_identifiers SET name = name || ' (edited)' WHERE hgnc_id = :h"), {"h": hgnc_id})
    # The models reading gene_identifiers, directly or through another model; none over pathways alone or eval_runs.
    readers = [
        "disease_genes",
        "int_pathway_pair_overlaps",
        "int_pathway_uniprot_sets",
        "pathway_equivalences",
        "stg_gene_identifiers",
    ]
    try:
        edited = materialize_selection(demo_platform, f"{TABLE} or group:dbt")
        assert edited.success and edited.checks_total > 0
        assert edited.materialized == sorted(["postgres/gene_identifiers", *readers])
        seen = _table_record(demo_platform, "gene_identifiers")
        assert seen["changed"] is True and seen["last_changed"] > unchanged["last_changed"]
        assert seen["dagster/row_count"] == genes and seen["digest"] != unchanged["digest"]
    finally:
        with engine.begin() as conn:
            conn.execute(text("UPDATE gene_identifiers SET name = :n WHERE hgnc_id = :h"), {"n": name, "h": hgnc_id})
        # The table read again before dbt, as a writer's run would: the models are then built from the version
        # the table asset records (else the UI would call them "Upstream data" once the table is read next).
        assert materialize_selection(demo_platform, f"{TABLE} or group:dbt").materialized == sorted(
            ["postgres/gene_identifiers", *readers]
        )
    with engine.begin() as conn:
        resolved = conn.execute(text("SELECT count(*) FROM analytics.pathway_equivalences")).scalar_one()
        conn.execute(text("DROP TABLE analytics.pathway_equivalences"))
    dropped = materialize_selection(demo_platform, "group:dbt")
    assert dropped.success and dropped.materialized == ["pathway_equivalences"]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM analytics.pathway_equivalences")).scalar_one() == resolved
    _assert_column_metadata(demo_platform, resolved)


TABLE = "key:postgres/gene_identifiers"


def _table_record(settings: FluxSettings, table: str) -> dict[str, object]:
    """The latest materialization of a platform table dbt reads (`postgres/<table>`): what its asset page shows."""
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        (record,) = instance.fetch_materializations(dg.AssetKey(["postgres", table]), limit=1).records
    assert record.asset_materialization is not None
    return {key: value.value for key, value in record.asset_materialization.metadata.items()}


def _assert_column_metadata(settings: FluxSettings, rows: int) -> None:
    """The mart's materialization says what the UI's Columns tab and column lineage show: its row count, each
    column's database type, and the staging columns each is computed from (read in the session's database, which
    is not the one the manifest was parsed in)."""
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("pathway_equivalences"))
    metadata = event.asset_materialization.metadata  # type: ignore[union-attr]
    assert metadata["dagster/row_count"].value == rows
    types = {column.name: column.type for column in metadata["dagster/column_schema"].value.columns}
    assert (types["kegg_id"], types["shared"]) == ("text", "integer") and types["jaccard"].startswith("double")
    lineage = metadata["dagster/column_lineage"].value.deps_by_column
    assert [(dep.asset_key.to_user_string(), dep.column_name) for dep in lineage["kegg_id"]] == [
        ("stg_pathway_mappings", "kegg_id")
    ]
