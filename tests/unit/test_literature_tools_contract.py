"""Question-time literature tools (retrieval/pubmed/) through Flux's E-utilities client, against a server that holds
them to NCBI's documented contract (tests/support/contracts/eutils_tools.py, eutils.py).

Sources: "The E-utilities In-Depth" (NCBI Bookshelf NBK25499) — ESearch (`querytranslation`, `count`, `idlist`),
ESummary (JSON DocSums, at most 10,000 uids, an `error` per uid it cannot summarise), ELink (`linksets` /
`linksetdbs` by link name: pubmed_pubmed, pubmed_pubmed_citedin, pubmed_pubmed_refs), EInfo (a database's fields and
links), EPost (ePostResult with QueryKey and WebEnv); "A General Introduction to the E-utilities" (NBK25497: tool,
email, 3 or 10 requests/s). NCBI answers some failures inside a 200 (an `error` key, an `ERROR` element); a 429 or
5xx is retried by the client; a body that does not parse is an error record, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dagster_project.sources.pubmed.client import EUtilsClient, make_eutils_client
from retrieval.kinds import pubmed_search
from retrieval.model.literature import LiteratureRequest
from retrieval.pubmed.tools import LiteratureTools
from retrieval.question.literature_questions import read_request
from tests.support.clock import paced_in_virtual_time
from tests.support.contract_server import Reply
from tests.support.contracts.eutils import KEY
from tests.support.contracts.eutils_tools import EUtilsToolsContractServer

CONTACT = "curator@pathway-lab.org"
CITED = "25274085"
CITING = ["36000001", "37000002", "35000003"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EUtilsToolsContractServer]:
    """NCBI's rates kept in virtual time: the clients made after this pace on the clock the server counts arrivals
    on, so a client that sends too fast is refused as in real time and the pacing costs no seconds."""
    virtual = paced_in_virtual_time(monkeypatch)
    started = EUtilsToolsContractServer(50, citations={CITED: CITING}, clock=virtual).start()
    yield started
    started.stop()


@pytest.fixture
def client(server: EUtilsToolsContractServer) -> Iterator[EUtilsClient]:
    made = make_eutils_client(
        server.url, email=CONTACT, api_key=KEY, max_attempts=3, timeout=10.0, backoff_initial=0.01, backoff_max=0.05
    )
    yield made
    made.close()


def _ask(client: EUtilsClient, question: str) -> tuple[str, pubmed_search.PubMedSearchData]:
    request = read_request(question)
    assert request is not None, question
    data = LiteratureTools(client).answer(question, request)
    return " ".join(text for text, _ in pubmed_search.statements(data)), data


def test_the_seeds_example_is_counted_with_its_query_translation_and_count(client: EUtilsClient) -> None:
    prose, data = _ask(client, "How many PubMed articles have CRISPR in the title from 2023?")
    assert data.count == 4512 and data.answered
    assert "PubMed holds 4,512 articles" in prose
    assert "Entrez query: CRISPR[ti]" in prose
    assert '"CRISPR"[Title] AND 2023/01/01:2023/12/31[Date - Publication]' in prose
    assert all(
        cited == [f"PMID:{a.pmid}"]
        for (_, cited), a in zip([s for s in pubmed_search.statements(data) if s[1]], data.articles, strict=True)
    )


def test_a_swallowed_phrase_is_refined_once_and_the_answer_says_what_changed(client: EUtilsClient) -> None:
    prose, data = _ask(client, "What are the newest papers on long covid brain fog?")
    assert data.trail is not None and data.trail.refinements == 1 and data.count == 412
    assert 'split "long covid brain fog" into "long covid" AND "brain fog"' in prose
    assert "The first query, long covid brain fog, was translated as" in prose and "(25 records)" in prose
    assert len(data.articles) == 10 and data.trail.requests == 2  # EInfo is not needed: the terms have no tags


def test_citing_articles_come_from_elink_and_are_summarised(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    prose, data = _ask(client, f"Which papers cite PMID {CITED}?")
    assert data.linked_total == 3 and [a.pmid for a in data.articles] == sorted(CITING, reverse=True)
    assert f"3 PubMed articles cite PMID {CITED}" in prose
    assert [path for path, _ in server.answered] == ["/elink.fcgi", "/esummary.fcgi"]


def test_article_facts_read_esummary_and_efetch_and_name_a_pmid_pubmed_lacks(client: EUtilsClient) -> None:
    prose, data = _ask(client, "Who wrote PMID 36000001 and PMID 99999999?")
    assert [a.pmid for a in data.articles] == ["36000001"] and data.missing == ["99999999"]
    assert "Rivera M, Okafor A, Lindqvist E et al." in prose and "MeSH: Tumor Suppressor Protein p53" in prose
    assert "PubMed holds no record with PMID 99999999." in prose
    _, none = _ask(client, "What is PMID 99999999 about?")
    assert not none.answered  # nothing PubMed holds: confidence 0


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("How many papers on asthma between 2020 and 2010?", "mindate '2020' is after maxdate '2010'"),
        ("How many PubMed articles?", "term must be a non-empty search string"),
    ],
)
def test_bad_arguments_are_refused_by_name_before_any_request(
    client: EUtilsClient, server: EUtilsToolsContractServer, question: str, said: str
) -> None:
    prose, data = _ask(client, question)
    assert said in data.error and not data.answered and data.count is None
    assert prose.startswith("Flux could not answer this from PubMed:") and server.answered == []


def test_an_unknown_field_tag_is_refused_then_the_corrected_call_is_made(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    request = LiteratureRequest(operation="count", topic="CRISPR", concepts=["CRISPR[xx]"])
    data = LiteratureTools(client).answer("CRISPR[xx]", request)
    assert data.trail is not None and "unknown field tag [xx]" in data.trail.attempts[0].error
    assert data.trail.final is not None and data.trail.final.term == "CRISPR"
    assert "unknown field tag [xx]" in data.corrected and "searched CRISPR instead" in data.corrected
    assert [path for path, _ in server.answered][:1] == ["/einfo.fcgi"]


def test_twenty_thousand_pmids_are_cut_to_what_an_answer_shows_and_the_answer_says_so(client: EUtilsClient) -> None:
    request = LiteratureRequest(operation="facts", pmids=[str(36_000_001 + i) for i in range(20_000)])
    data = LiteratureTools(client).answer("facts", request)
    assert "20,000 PMIDs were asked" in data.corrected and "the first 200 were fetched" in data.corrected
    assert data.articles[0].pmid == "36000001" and len(data.missing) == 199


def test_429_and_5xx_are_retried_and_the_answer_completes(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    server.inject(
        "/esearch.fcgi",
        Reply(429, b'{"error":"API rate limit exceeded"}', {"Content-Type": "application/json"}),
        Reply.error(503),
    )
    _, data = _ask(client, "How many PubMed articles have CRISPR in the title from 2023?")
    assert data.count == 4512 and server.statuses("/esearch.fcgi") == [429, 503, 200]


@pytest.mark.parametrize(
    ("path", "reply", "said"),
    [
        (
            "/esummary.fcgi",
            Reply(200, b'{"header": {}, "result": {"uids": [', {"Content-Type": "application/json"}),
            "not valid JSON",
        ),
        (
            "/esummary.fcgi",
            Reply(
                200, b'{"header": {"type": "esummary"}, "error": "Invalid uid 1"}', {"Content-Type": "application/json"}
            ),
            "Invalid uid 1",
        ),
        (
            "/elink.fcgi",
            Reply(200, b'{"ERROR": "Invalid db name specified: pubmed"}', {"Content-Type": "application/json"}),
            "Invalid db name",
        ),
    ],
)
def test_malformed_bodies_and_errors_inside_a_200_are_errors_in_the_answer(
    client: EUtilsClient, server: EUtilsToolsContractServer, path: str, reply: Reply, said: str
) -> None:
    for _ in range(3):
        server.inject(path, reply)
    prose, data = _ask(
        client, f"Which papers cite PMID {CITED}?" if path == "/elink.fcgi" else "What is PMID 36000001 about?"
    )
    assert said.lower() in data.error.lower() and not data.answered
    assert prose.startswith("Flux could not answer this from PubMed:")


def test_ncbi_down_is_a_clear_answer_not_a_traceback() -> None:
    down = make_eutils_client(
        "http://127.0.0.1:9", email=CONTACT, max_attempts=2, timeout=2.0, backoff_initial=0.01, backoff_max=0.02
    )
    prose, data = _ask(down, "How many PubMed articles have CRISPR in the title from 2023?")
    down.close()
    assert "NCBI E-utilities" in data.error and not data.answered and data.count is None
    assert prose.startswith("Flux could not answer this from PubMed:")


def test_epost_puts_ids_on_the_history_server_and_esummary_reads_them_back(client: EUtilsClient) -> None:
    posted = client.epost("pubmed", ["36000001", "37000002", "35000003"])
    assert posted["query_key"] == "1" and posted["webenv"].startswith("MCID_") and posted["invalid"] == []
    read = client.esummary("pubmed", webenv=posted["webenv"], query_key=posted["query_key"], retstart=1, retmax=2)
    assert [s["uid"] for s in read["summaries"]] == ["37000002", "35000003"]
    assert "error" in client.esummary("pubmed", ["1"], webenv=posted["webenv"], query_key="1")


def test_einfo_lists_pubmeds_fields_and_links(client: EUtilsClient) -> None:
    info = client.einfo("pubmed")
    assert ("TIAB", "Title/Abstract") in info["fields"] and "pubmed_pubmed_citedin" in info["links"]
    assert client.unknown_tags("pubmed", "a[ti] AND b[tiab] AND c[mh:noexp] AND d[zz]") == ["zz"]


def test_what_the_literature_says_reads_the_most_relevant_abstracts(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    from retrieval.question.literature_questions import summary_request

    request = summary_request("What does the literature say about long covid brain fog?")
    assert request is not None and request.operation == "summary"
    data, papers = LiteratureTools(client).read_abstracts(request.asked, request)
    assert data.trail is not None and data.trail.passed and data.trail.refinements == 1
    assert len(papers) == 8 and all("long covid and brain fog" in p.abstract for p in papers)
    assert [path for path, _ in server.answered] == ["/esearch.fcgi", "/esearch.fcgi", "/efetch.fcgi"]


def test_every_question_of_the_failure_mode_set_ends_on_its_recorded_passing_translation(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    """Over HTTP, each question Flux sends is searched, checked and refined until its translation is the one the set
    records last; a failing translation's count is never the answer."""
    from dagster_project.evals.pubmed_eval import load

    items = [i for i in load()["items"] if i["sent_by"] == "flux"]
    for item in items:
        _, data = _ask(client, item["question"])
        last = item["exchanges"][-1]
        assert data.trail is not None and data.trail.final is not None, item["id"]
        assert (data.trail.final.term, data.count) == (last["term"], last["count"]), item["id"]
        assert data.trail.refinements == len(item["exchanges"]) - 1, item["id"]
    assert 429 not in server.statuses()  # paced at NCBI's rate all along


def test_a_malformed_efetch_body_costs_the_mesh_not_the_answer(
    client: EUtilsClient, server: EUtilsToolsContractServer
) -> None:
    server.inject(
        "/efetch.fcgi",
        Reply(200, b"<PubmedArticleSet><PubmedArticle><MedlineCitation>", {"Content-Type": "text/xml; charset=UTF-8"}),
    )
    prose, data = _ask(client, "Who wrote PMID 36000001?")
    assert [a.pmid for a in data.articles] == ["36000001"] and data.articles[0].mesh == []
    assert "Rivera M" in prose and data.answered
