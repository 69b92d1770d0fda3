"""Reactions as data, on the demo platform's Postgres and Neo4j. The demo holds Reactome's Glycolysis reactions in
ContentService form (`reactions.json`, `reaction_details.json`: the live client's files); Reactome's BioPAX export
of the same pathway (release 84, ../shared/data/reactome/reactions) must give exactly the same rows — the three
modes produce the same tables — its reactions outside the pathways the demo holds quarantined. Loading again changes
nothing; taking the reactions away takes their nodes and edges away too, and loading them back restores both."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.defs.materialize import materialize_selection
from dagster_project.graph import loader
from dagster_project.sources.model import ParseResult
from dagster_project.sources.reactome.biopax import parse_biopax
from dagster_project.sources.reactome.normalizer import drop_dangling_reactions
from dagster_project.storage import loaders

SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
EXPORT = SNAPSHOT / "reactome" / "reactions" / "R-HSA-70171_level3.biopax.owl"
pytestmark = [pytest.mark.shared_data, pytest.mark.skipif(not EXPORT.is_file(), reason=f"{EXPORT} not found")]
GLYCOLYSIS = "R-HSA-70171"
TABLES = ("reactions", "reaction_participants", "reaction_steps")
ROWS = {
    "reactions": "SELECT reaction_id, pathway_id FROM reactions",
    "reaction_participants": "SELECT reaction_id, role, entity_kind, entity_id, components FROM reaction_participants",
    "reaction_steps": "SELECT preceding_id, following_id FROM reaction_steps",
}


def _rows(engine: Engine) -> dict[str, set[tuple]]:
    with engine.connect() as conn:
        return {
            t: {tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in conn.execute(text(sql))}
            for t, sql in ROWS.items()
        }


def _graph(settings: FluxSettings) -> tuple[dict[str, int], dict[str, int]]:
    assert materialize_selection(settings, "key:knowledge_graph").success
    return loader.graph_counts(graph_driver(settings))


@pytest.fixture
def export(demo_platform: FluxSettings) -> Iterator[tuple[ParseResult, list[str]]]:
    """The BioPAX export, parsed and cut to the pathways the demo holds; the demo's own rows are back afterwards."""
    engine = engine_for(demo_platform.platform_database_url)
    demo_rows = _rows(engine)
    assert len(demo_rows["reactions"]) == 15, "the demo holds Glycolysis's own 15 reactions"
    with engine.connect() as conn:
        held = set(conn.execute(text("SELECT pathway_id FROM pathways WHERE status = 'active'")).scalars())
    records = parse_biopax(EXPORT.read_bytes(), "raw/R-HSA-70171_level3.biopax.owl")
    quarantined = drop_dangling_reactions(records, held)
    yield records, [q.reason for q in quarantined]
    loaders.replace_reactions(engine, records.reactions, records.participants, records.steps)
    assert _rows(engine) == demo_rows
    assert materialize_selection(demo_platform, "key:knowledge_graph").success


def test_the_snapshot_export_gives_the_demos_rows_and_the_graph_follows(
    demo_platform: FluxSettings, export: tuple[ParseResult, list[str]]
) -> None:
    records, reasons = export
    engine, driver = engine_for(demo_platform.platform_database_url), graph_driver(demo_platform)
    # The demo holds Glycolysis but not its two sub-pathways: their 9 reactions have nowhere to hang.
    assert len(records.reactions) == 15 and len(reasons) == 9
    assert all("which this release does not list" in r for r in reasons)
    demo_rows = _rows(engine)
    assert len(demo_rows["reaction_participants"]) > 60 and len(demo_rows["reaction_steps"]) > 5

    loaders.replace_reactions(engine, records.reactions, records.participants, records.steps)
    assert _rows(engine) == demo_rows  # BioPAX (snapshot) and ContentService (demo, live) agree row for row
    loaders.replace_reactions(engine, records.reactions, records.participants, records.steps)
    assert _rows(engine) == demo_rows  # and a second load changes nothing

    labels, types = _graph(demo_platform)
    assert labels["Reaction"] == 15 and labels.get("Complex", 0) > 0
    assert types["PRECEDES"] == len(demo_rows["reaction_steps"])
    assert {"HAS_INPUT", "HAS_OUTPUT", "CATALYSED_BY", "HAS_COMPONENT", "ACTIVATED_BY", "INHIBITED_BY"} <= set(types)
    in_glycolysis = driver.execute_query(
        "MATCH (:Pathway {id: $id})-[:HAS_REACTION]->(r:Reaction) RETURN count(r) AS n", id=GLYCOLYSIS
    ).records[0]["n"]
    assert in_glycolysis == 15
    # "HK1,2,3,GCK,HKDC1 phosphorylate Glc to form G6P": alpha-D-glucose (CHEBI:17925) and ATP in, the hexokinase
    # set as catalyst, its parts placed on the demo's HGNC genes; compounds carry Reactome's names.
    consumed = driver.execute_query(
        "MATCH (r:Reaction)-[:HAS_INPUT]->(c:Compound {id: 'CHEBI:17925'}) RETURN collect(r.id) AS ids, "
        "collect(DISTINCT c.name) AS names"
    ).records[0]
    assert set(consumed["ids"]) == {"R-HSA-70420", "R-HSA-5696021"} and consumed["names"] == ["Glc"]
    catalysts = driver.execute_query(
        "MATCH (:Reaction {id: 'R-HSA-70420'})-[:CATALYSED_BY]->(:Complex)-[:HAS_COMPONENT]->(g:Gene) "
        "RETURN collect(g.symbol) AS symbols"
    ).records[0]["symbols"]
    assert {"GCK", "HK1", "HK2", "HK3"} <= set(catalysts), catalysts
    # Pyruvate kinase's isoforms are cross-referenced as "UniProt Isoform": PKM and PKLR are its genes.
    kinases = driver.execute_query(
        "MATCH (:Reaction {id: 'R-HSA-71670'})-[:CATALYSED_BY]->(:Complex)-[:HAS_COMPONENT]->(g:Gene) "
        "RETURN collect(g.symbol) AS symbols"
    ).records[0]["symbols"]
    assert {"PKM", "PKLR"} <= set(kinases), kinases
    assert _graph(demo_platform) == (labels, types)  # projecting again changes nothing

    with engine.begin() as conn:
        conn.execute(text("DELETE FROM reactions"))  # participants and steps go with them
    emptied_labels, emptied_types = _graph(demo_platform)
    assert "Reaction" not in emptied_labels and "Complex" not in emptied_labels
    assert not set(emptied_types) & {"PRECEDES", "HAS_INPUT", "CATALYSED_BY", "HAS_COMPONENT", "HAS_REACTION"}
