"""Reactions as data, on the demo platform's Postgres and Neo4j: Reactome's Glycolysis BioPAX export (release 84,
../shared/data/reactome/reactions) parsed, its reactions outside the pathways the demo holds quarantined, the rest
loaded into `reactions`, `reaction_participants` and `reaction_steps` and projected into the graph (HAS_REACTION,
HAS_INPUT, HAS_OUTPUT, CATALYSED_BY, ACTIVATED_BY, INHIBITED_BY, HAS_COMPONENT, PRECEDES). Loading twice changes
nothing; taking the reactions away takes their nodes and edges away too."""

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


def _counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}


def _graph(settings: FluxSettings) -> tuple[dict[str, int], dict[str, int]]:
    assert materialize_selection(settings, "key:knowledge_graph").success
    return loader.graph_counts(graph_driver(settings))


@pytest.fixture
def glycolysis(demo_platform: FluxSettings) -> Iterator[tuple[ParseResult, list[str]]]:
    engine = engine_for(demo_platform.platform_database_url)
    with engine.connect() as conn:
        held = set(conn.execute(text("SELECT pathway_id FROM pathways WHERE status = 'active'")).scalars())
        reactions_before = conn.execute(text("SELECT count(*) FROM reactions")).scalar_one()
    assert reactions_before == 0, "the demo holds no reactions of its own"
    records = parse_biopax(EXPORT.read_bytes(), "raw/R-HSA-70171_level3.biopax.owl")
    quarantined = drop_dangling_reactions(records, held)
    yield records, [q.reason for q in quarantined]
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM reactions"))  # participants and steps go with them
    assert materialize_selection(demo_platform, "key:knowledge_graph").success  # and the graph's nodes with them


def test_reactions_load_once_and_project_into_the_graph(demo_platform: FluxSettings,
                                                        glycolysis: tuple[ParseResult, list[str]]) -> None:
    records, reasons = glycolysis
    engine, driver = engine_for(demo_platform.platform_database_url), graph_driver(demo_platform)
    # The demo holds Glycolysis but not its two sub-pathways: their 9 reactions have nowhere to hang.
    assert len(records.reactions) == 15 and len(reasons) == 9
    assert all("which this release does not list" in r for r in reasons)
    labels_before, types_before = _graph(demo_platform)

    loaders.replace_reactions(engine, records.reactions, records.participants, records.steps)
    loaded = _counts(engine)
    assert loaded["reactions"] == 15 and loaded["reaction_participants"] > 60 and loaded["reaction_steps"] > 5
    loaders.replace_reactions(engine, records.reactions, records.participants, records.steps)
    assert _counts(engine) == loaded  # a second load changes nothing

    labels, types = _graph(demo_platform)
    assert labels["Reaction"] == 15 and labels.get("Complex", 0) > 0
    assert types["PRECEDES"] == loaded["reaction_steps"]
    assert {"HAS_INPUT", "HAS_OUTPUT", "CATALYSED_BY", "HAS_COMPONENT"} <= set(types)
    in_glycolysis = driver.execute_query("MATCH (:Pathway {id: $id})-[:HAS_REACTION]->(r:Reaction) "
                                         "RETURN count(r) AS n", id=GLYCOLYSIS).records[0]["n"]
    assert in_glycolysis == 15
    # "HK1,2,3,GCK,HKDC1 phosphorylate Glc to form G6P": alpha-D-glucose (CHEBI:17925) and ATP in, the hexokinase
    # set as catalyst, its parts placed on the demo's HGNC genes.
    consumed = driver.execute_query(
        "MATCH (r:Reaction)-[:HAS_INPUT]->(c:Compound {id: 'CHEBI:17925'}) RETURN collect(r.id) AS ids"
    ).records[0]["ids"]
    assert set(consumed) == {"R-HSA-70420", "R-HSA-5696021"}  # hexokinases, and ADPGK
    catalysts = driver.execute_query(
        "MATCH (:Reaction {id: 'R-HSA-70420'})-[:CATALYSED_BY]->(:Complex)-[:HAS_COMPONENT]->(g:Gene) "
        "RETURN collect(g.symbol) AS symbols").records[0]["symbols"]
    assert {"GCK", "HK1", "HK2", "HK3"} <= set(catalysts), catalysts
    assert _graph(demo_platform) == (labels, types)  # projecting again changes nothing

    with engine.begin() as conn:
        conn.execute(text("DELETE FROM reactions"))
    assert _graph(demo_platform) == (labels_before, types_before)  # the nodes and edges went with the rows
