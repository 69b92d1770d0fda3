"""Literature-tools questions through the serving pipeline: with live search off (the demo platform) the answer says
so and gives what Flux's own abstracts hold, labelled as the index's and never as PubMed's count; in live mode the
same questions go to the E-utilities contract server (tests/support/contracts/eutils_tools.py: NCBI's documented
ESearch / ESummary / ELink / EInfo / EPost, recorded translations), are checked and refined, are never served from
the answer cache, and a rephrased question reuses the stored strategy from Postgres instead of refining again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from retrieval.pipeline import Pipeline
from tests.integration.conftest import ask_api as ask
from tests.integration.test_retrieval_pipeline import fresh_cache
from tests.support.contracts.eutils import KEY
from tests.support.contracts.eutils_tools import EUtilsToolsContractServer

SEED = "How many PubMed articles have CRISPR in the title from 2023?"


@pytest.fixture(scope="module")
def engine(demo_platform: FluxSettings) -> Engine:
    return engine_for(demo_platform.platform_database_url)


@pytest.fixture(scope="module")
def ncbi() -> Iterator[EUtilsToolsContractServer]:
    server = EUtilsToolsContractServer(50, citations={"25274085": ["36000001", "37000002"]}).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def live(demo_platform: FluxSettings, ncbi: EUtilsToolsContractServer) -> Pipeline:
    """The demo platform's index, with live literature search against the contract server."""
    settings = demo_platform.evolve(
        source_mode="live",
        eutils_url=ncbi.url,
        ncbi_api_key=KEY,
        contact_email="curator@pathway-lab.org",
        http_max_attempts=2,
    )
    return Pipeline.from_settings(settings, cache=fresh_cache(settings))


def _indexed(engine: Engine, where: str = "TRUE") -> int:
    with engine.connect() as conn:
        return conn.execute(
            text(f"SELECT count(*) FROM documents WHERE source = 'pubmed' AND status = 'active' AND {where}")
        ).scalar_one()


def test_with_live_search_off_a_count_is_the_index_s_and_says_so(query_client: TestClient, engine: Engine) -> None:
    answer = ask(query_client, "How many PubMed articles mention apoptosis in the title?")
    held = _indexed(engine)
    assert answer["kind"] == "pubmed_search" and answer["confidence"] == 0
    assert answer["answer"].startswith(
        f"Live literature search is off (FLUX_SOURCE_MODE=demo); Flux's index holds {held:,} PubMed abstracts."
    )
    in_titles = _indexed(engine, r"title ~* '\mapoptosis'")
    assert f"In Flux's index (not PubMed), {in_titles:,} of those abstracts match" in answer["answer"]
    assert "PubMed holds" not in answer["answer"]


@pytest.fixture
def indexed_paper(engine: Engine) -> Iterator[tuple[str, str]]:
    """A PubMed abstract in the demo's document store for the length of one test (the demo bundles none)."""
    pmid, title = "39000123", "Brain fog after SARS-CoV-2 infection: a cohort study"
    metadata = '{"year": 2024, "journal": "Nature communications", "mesh": ["Post-Acute COVID-19 Syndrome"]}'
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO documents (type, source, external_id, title, content, metadata, content_hash) "
                "VALUES ('paper', 'pubmed', :pmid, :title, 'Cognitive symptoms persisted.', "
                "CAST(:meta AS jsonb), repeat('a', 64))"
            ),
            {"pmid": pmid, "title": title, "meta": metadata},
        )
    yield pmid, title
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM documents WHERE source = 'pubmed' AND external_id = :pmid"), {"pmid": pmid})


def test_with_live_search_off_an_indexed_pmid_is_described_and_citations_need_live_mode(
    query_client: TestClient, indexed_paper: tuple[str, str]
) -> None:
    pmid, title = indexed_paper
    facts = ask(query_client, f"What is PMID {pmid} about?")
    assert facts["kind"] == "pubmed_search" and facts["confidence"] > 0
    assert title in facts["answer"] and "MeSH: Post-Acute COVID-19 Syndrome" in facts["answer"]
    assert f"PMID:{pmid}" in [c["id"] for c in facts["citations"]] and facts["table"]["rows"][0][0] == pmid
    cites = ask(query_client, f"Which papers cite PMID {pmid}?")
    assert cites["confidence"] == 0 and "which Flux calls only in live mode" in cites["answer"]
    unknown = ask(query_client, "Who wrote PMID 1?")
    assert unknown["confidence"] == 0 and "holds no abstract with PMID 1" in unknown["answer"]


def test_live_the_seed_question_is_counted_by_pubmed_and_never_cached(
    live: Pipeline, ncbi: EUtilsToolsContractServer
) -> None:
    first = live.ask(SEED)
    assert first.kind == "pubmed_search" and first.confidence > 0
    assert "PubMed holds 4,512 articles" in first.answer and '"CRISPR"[Title]' in first.answer
    assert first.citations and all(c.id.startswith("PMID:") for c in first.citations)
    searches = len(ncbi.statuses("/esearch.fcgi"))
    again = live.ask(SEED)
    assert not again.cached and len(ncbi.statuses("/esearch.fcgi")) == searches + 1  # asked PubMed again


def test_live_a_rephrasing_reuses_the_strategy_kept_in_postgres(
    live: Pipeline, engine: Engine, ncbi: EUtilsToolsContractServer
) -> None:
    with engine.begin() as conn:  # another test's question may have stored this very strategy already
        conn.execute(text("DELETE FROM literature_strategies"))
    first = live.ask("What are the newest papers on long covid brain fog?")
    assert first.data is not None and first.data.trail.refinements == 1  # type: ignore[union-attr]
    with engine.connect() as conn:
        stored = conn.execute(
            text(
                "SELECT final_term, attempts FROM literature_strategies "
                "WHERE question = 'What are the newest papers on long covid brain fog?'"
            )
        ).one()
    assert tuple(stored) == ("long covid AND brain fog", 2)
    before = len(ncbi.statuses("/esearch.fcgi"))
    rephrased = live.ask("Latest articles about brain fog in long covid")
    trail = rephrased.data.trail  # type: ignore[union-attr]
    assert trail.reused_strategy == "long covid AND brain fog" and trail.requests == 1 and trail.passed
    assert len(ncbi.statuses("/esearch.fcgi")) == before + 1
    near_miss = live.ask("What are the newest papers on long covid fatigue?")
    assert near_miss.data.trail.reused_strategy == ""  # type: ignore[union-attr]
    live.ask("What are the newest papers on long covid brain fog?")
    with engine.connect() as conn:  # the rephrasing has the same tokens: one row, used by it and by the repeat
        rows = conn.execute(
            text("SELECT count(*), max(uses) FROM literature_strategies WHERE final_term = 'long covid AND brain fog'")
        ).one()
    assert tuple(rows) == (1, 2)


def test_live_ncbi_down_is_a_clear_answer(demo_platform: FluxSettings) -> None:
    settings = demo_platform.evolve(
        source_mode="live",
        eutils_url="http://127.0.0.1:9",
        http_max_attempts=1,
        contact_email="curator@pathway-lab.org",
        http_timeout=2.0,
    )
    answer = Pipeline.from_settings(settings, cache=fresh_cache(settings)).ask(SEED)
    assert answer.kind == "pubmed_search" and answer.confidence == 0
    assert answer.answer.startswith("Flux could not answer this from PubMed: NCBI E-utilities")


def test_live_what_the_literature_says_is_answered_from_pubmeds_abstracts(live: Pipeline) -> None:
    """ "What does the literature say about X" reads the most relevant abstracts from PubMed (a checked search,
    then EFetch) and answers from them with the same validation and grounding as indexed evidence: every claim
    cites a PMID the search returned, and the answer shows the search."""
    answer = live.ask("What does the literature say about long covid brain fog?")
    assert answer.kind == "literature"
    # The strategy the newest-papers question stored may be reused: then no refinement was needed.
    assert "PubMed, searched live" in answer.answer and "Entrez query long covid AND brain fog" in answer.answer
    assert answer.confidence > 0 and answer.claims, answer.answer
    assert all(c.startswith("PMID:") for claim in answer.claims for c in claim.citations)
    assert not live.ask("What does the literature say about long covid brain fog?").cached
