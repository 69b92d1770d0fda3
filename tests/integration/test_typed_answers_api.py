"""Typed graph answers through `POST /query` on the demo platform, each checked against the graph read directly."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import Driver

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import graph_driver

MEMBERS = "MATCH (:Pathway {id: $id})-[:HAS_MEMBER]->(g:Gene) RETURN g.symbol AS s"
CHILDREN = "MATCH (c:Pathway)-[:SUBPATHWAY_OF]->(:Pathway {id: $id}) RETURN c.id AS s"
HOLDING = (
    "MATCH (p:Pathway)-[:HAS_MEMBER]->(g:Gene) WHERE g.symbol IN $genes WITH p, count(DISTINCT g) AS n "
    "WHERE n = size($genes) RETURN p.id AS s"
)
MAPPED = "MATCH (:Pathway {id: $id})-[:EQUIVALENT_TO|PART_OF]-(q:Pathway {source: $source}) RETURN q.id AS s"


@pytest.fixture(scope="module")
def client(query_client: TestClient) -> TestClient:
    return query_client


@pytest.fixture(scope="module")
def graph(demo_platform: FluxSettings) -> Driver:
    s = demo_platform
    return graph_driver(s)


def values(driver: Driver, query: str, **params: Any) -> set[str]:
    return {r["s"] for r in driver.execute_query(query, **params).records}


def ask(client: TestClient, question: str) -> dict[str, Any]:
    response = client.post("/query", json={"question": question, "mode": "thinking"})
    assert response.status_code == 200, response.text
    answer = response.json()
    cited = {c["id"] for c in answer["citations"]}
    assert all(set(claim["citations"]) <= cited for claim in answer["claims"]), "every claim cites given nodes"
    return answer


def test_members_list_every_gene_of_the_pathway(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Which genes belong to the KEGG pathway 'Mismatch repair'?")
    assert answer["kind"] == "members" and answer["data"]["pathway"]["id"] == "hsa03430"
    expected = values(graph, MEMBERS, id="hsa03430")
    assert expected and {g["symbol"] for g in answer["data"]["genes"]} == expected
    assert answer["data"]["total"] == len(expected) and all(g in answer["answer"] for g in expected)


def test_pathways_holding_two_genes(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Which pathways contain both MLH1 and MSH2?")
    assert answer["kind"] == "gene_pathways"
    expected = values(graph, HOLDING, genes=["MLH1", "MSH2"])
    assert expected and {p["id"] for p in answer["data"]["pathways"]} == expected
    sizes = [p["size"] for p in answer["data"]["pathways"]]
    assert sizes == sorted(sizes), "most specific pathways first"


def test_counterpart_with_relation_scores_and_shared_genes(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Which KEGG pathway corresponds to Reactome's glycolysis?")
    assert answer["kind"] == "counterpart" and answer["data"]["pathway"]["id"] == "R-HSA-70171"
    expected = values(graph, MAPPED, id="R-HSA-70171", source="kegg")
    found = answer["data"]["counterparts"]
    assert expected and {m["pathway"]["id"] for m in found} == expected
    assert all(m["confidence"] is not None and m["jaccard"] is not None for m in found)
    assert "hsa00010" in " ".join(c["text"] for c in answer["claims"])


def test_shared_genes_of_two_pathways(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Which genes do the KEGG and Reactome mismatch repair pathways share?")
    assert answer["kind"] == "shared_genes"
    ids = {p["id"] for p in answer["data"]["pathways"]}
    assert ids == {"R-HSA-5358508", "hsa03430"}
    expected = values(graph, MEMBERS, id="R-HSA-5358508") & values(graph, MEMBERS, id="hsa03430")
    assert {g["symbol"] for g in answer["data"]["shared"]} == expected and answer["data"]["total"] == len(expected)


def test_comparisons_of_two_pathways_and_of_two_genes_carry_a_table(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Compare KEGG glycolysis and Reactome glycolysis")
    data = answer["data"]
    assert answer["kind"] == "compare" and data["subject"] == "pathways"
    a, b = values(graph, MEMBERS, id=data["left"]["id"]), values(graph, MEMBERS, id=data["right"]["id"])
    assert set(data["shared"]) == a & b and set(data["only_left"]) == a - b and set(data["only_right"]) == b - a
    assert data["table"].startswith("| |") and data["table"] in answer["answer"]
    genes = ask(client, "How does TP53 differ from MDM2?")
    assert genes["kind"] == "compare" and genes["data"]["subject"] == "genes"
    assert set(genes["data"]["shared"]) == values(graph, HOLDING, genes=["TP53", "MDM2"])


def test_hierarchy_lists_parents_and_sub_pathways(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "What are the sub-pathways of Reactome's glucose metabolism?")
    assert answer["kind"] == "hierarchy"
    expected = values(graph, CHILDREN, id="R-HSA-70326")
    assert expected and {c["id"] for c in answer["data"]["children"]} == expected


# Ancestors of a pathway that have no parent of their own, read over Bolt (not through Flux's code).
TOP_LEVEL = (
    "MATCH (:Pathway {id: $id})-[:SUBPATHWAY_OF*1..]->(t:Pathway) WHERE NOT (t)-[:SUBPATHWAY_OF]->() "
    "RETURN DISTINCT t.id AS s"
)


def test_a_pathway_s_category_is_its_top_level_ancestor(client: TestClient, graph: Driver) -> None:
    answer = ask(client, "Which top-level Reactome category does Glycolysis belong to?")
    assert answer["kind"] == "hierarchy" and answer["plan"]["depth"] is None, answer["answer"]
    expected = values(graph, TOP_LEVEL, id="R-HSA-70171")
    assert expected and {t["id"] for t in answer["data"]["top_level"]} == expected
    assert {lineage[0]["id"] for lineage in answer["data"]["lineages"]} == {"R-HSA-70171"}
    assert expected <= {c["id"] for c in answer["citations"]}


def test_literature_questions_keep_text_evidence_and_no_payload(client: TestClient) -> None:
    answer = ask(client, "What does TP53 do in apoptosis?")
    assert answer["kind"] == "literature" and answer["data"] is None and answer["citations"]


def test_an_unknown_pathway_in_a_graph_question_is_not_found_and_named_in_a_warning(client: TestClient) -> None:
    answer = ask(client, "Which genes do the Frobnication and Quux pathways share?")
    assert answer["kind"] == "not_found" and any("no other pathway named" in w for w in answer["warnings"])
    assert answer["data"]["what"] == "pathway" and answer["answer"].startswith("The index holds no pathway")


def test_a_conversation_resolves_follow_ups_and_keeps_its_turns(client: TestClient, graph: Driver) -> None:
    first = ask(client, "Which genes belong to the Reactome glycolysis pathway?")
    conversation = first["conversation_id"]
    assert conversation and first["answer_id"]
    response = client.post("/query", json={"question": "which of those are kinases?", "conversation_id": conversation})
    assert response.status_code == 200, response.text
    kinases = response.json()
    assert kinases["asked_as"] == "Which genes of R-HSA-70171 are kinases?"
    data = kinases["data"]
    assert data["name_filter"] == "kinase" and data["total"] == len(values(graph, MEMBERS, id="R-HSA-70171"))
    assert data["genes"] and all("kinase" in g["name"].lower() for g in data["genes"])
    assert {g["symbol"] for g in data["genes"]} < {g["symbol"] for g in first["data"]["genes"]}
    turns = client.get(f"/conversations/{conversation}").json()["turns"]
    assert [t["turn"] for t in turns] == [1, 2] and turns[1]["question"] == "which of those are kinases?"
    assert turns[1]["answer"]["answer_id"] == kinases["answer_id"]


def test_a_stored_answer_comes_back_as_json_and_as_a_markdown_report(client: TestClient) -> None:
    answer = ask(client, "Which genes belong to the KEGG pathway 'Mismatch repair'?")
    stored = client.get(f"/answers/{answer['answer_id']}")
    assert stored.status_code == 200 and stored.json()["data"] == answer["data"]
    report = client.get(f"/answers/{answer['answer_id']}", params={"format": "md"})
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/markdown")
    assert "https://www.kegg.jp/pathway/hsa03430" in report.text and "## Genes" in report.text


def test_unknown_ids_are_404s_and_a_lone_follow_up_gets_a_warning(client: TestClient) -> None:
    missing = client.post("/query", json={"question": "and its sub-pathways?", "conversation_id": "nope"})
    assert missing.status_code == 404 and "no conversation 'nope'" in missing.json()["detail"]
    assert client.get("/answers/nope").status_code == 404
    assert client.get("/conversations/nope").status_code == 404
    assert client.get("/answers/x", params={"format": "pdf"}).status_code == 422
    lone = ask(client, "and its sub-pathways?")
    assert any("no previous turn" in w for w in lone["warnings"])


def test_the_serving_path_reads_the_graph_in_read_access_mode(graph: Driver) -> None:
    from neo4j.exceptions import Neo4jError

    from retrieval.retrievers.graph_facts import GraphReader

    with pytest.raises(Neo4jError):
        GraphReader(graph).rows("CREATE (n:FluxWriteProbe) RETURN 1 AS s")
    assert values(graph, "MATCH (n:FluxWriteProbe) RETURN n.id AS s") == set()
