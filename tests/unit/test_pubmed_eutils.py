"""EUtilsClient (esearch, efetch) against the local fault server: bad arguments never reach the network, failures
come back as data."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest

from dagster_project.core.http import HttpClient
from dagster_project.sources.pubmed import EUtilsClient, make_eutils_client, parse_pubmed_xml
from tests.support.fault_server import FaultServer, Reply

EMAIL = "dev@example.org"
QUERY_TRANSLATION = (
    '("cancer"[Supplementary Concept] OR "cancer"[All Fields] OR "neoplasms"[MeSH Terms] OR "neoplasms"[All Fields]'
    ' OR "cancers"[All Fields] OR "cancer s"[All Fields]) AND 2020/01/01:2020/12/31[Date - Publication]'
)
ESEARCH_BODY = json.dumps(
    {
        "header": {"type": "esearch", "version": "0.3"},
        "esearchresult": {
            "count": "184321",
            "retmax": "3",
            "retstart": "0",
            "idlist": ["33658472", "33657891", "33656204"],
            "translationset": [{"from": "cancer", "to": QUERY_TRANSLATION.split(" AND ")[0]}],
            "querytranslation": QUERY_TRANSLATION,
        },
    }
)
ESEARCH_HISTORY_BODY = json.dumps(
    {
        "header": {"type": "esearch", "version": "0.3"},
        "esearchresult": {
            "count": "0",
            "retmax": "0",
            "retstart": "0",
            "querykey": "1",
            "webenv": "MCID_65f1c2a9e4b0d1234567890a",
            "idlist": [],
            "translationset": [],
            "querytranslation": "zzyzxqq[All Fields]",
            "errorlist": {"phrasesnotfound": ["zzyzxqq"], "fieldsnotfound": []},
            "warninglist": {"phrasesignored": [], "quotedphrasesnotfound": [], "outputmessages": ["No items found."]},
        },
    }
)
EFETCH_XML = """<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">
<PubmedArticleSet><PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">33658472</PMID>
<Article><ArticleTitle>A title.</ArticleTitle><Abstract><AbstractText>Text.</AbstractText></Abstract></Article>
</MedlineCitation></PubmedArticle></PubmedArticleSet>
"""


def _client(server: FaultServer) -> EUtilsClient:
    http = HttpClient(
        server.url,
        contact_email=EMAIL,
        requests_per_second=100,
        max_attempts=3,
        backoff_initial=0.01,
        backoff_max=0.05,
        timeout=5.0,
    )
    return EUtilsClient(http, email=EMAIL)


@pytest.fixture
def client(fault_server: FaultServer) -> Iterator[EUtilsClient]:
    eutils = _client(fault_server)
    yield eutils
    eutils.close()


@pytest.fixture(scope="module")
def idle_server() -> Iterator[FaultServer]:
    """One server for all the no-request cases: none of them may reach it."""
    server = FaultServer().start()
    yield server
    server.stop()


INVALID_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("esearch", {"db": "pubmedx", "term": "cancer"}, "db"),
    ("esearch", {"db": "pubmed", "term": "   "}, "term"),
    ("esearch", {"db": "pubmed", "term": "cancer", "retmax": 0}, "retmax"),
    ("esearch", {"db": "pubmed", "term": "cancer", "retmax": 10_001}, "retmax"),
    ("esearch", {"db": "pubmed", "term": "cancer", "retstart": -1}, "retstart"),
    ("esearch", {"db": "pubmed", "term": "cancer", "mindate": "2020-01-01", "maxdate": "2021"}, "mindate"),
    ("esearch", {"db": "pubmed", "term": "cancer", "mindate": "2020", "maxdate": "2021/13"}, "maxdate"),
    ("esearch", {"db": "pubmed", "term": "cancer", "mindate": "2020/02/30", "maxdate": "2021"}, "mindate"),
    ("esearch", {"db": "pubmed", "term": "cancer", "mindate": "2020"}, "maxdate"),
    ("esearch", {"db": "pubmed", "term": "cancer", "maxdate": "2020"}, "mindate"),
    ("esearch", {"db": "pubmed", "term": "cancer", "mindate": "2021/06", "maxdate": "2021/05/31"}, "mindate"),
    (
        "esearch",
        {"db": "pubmed", "term": "cancer", "mindate": "2020", "maxdate": "2021", "datetype": "xdat"},
        "datetype",
    ),
    ("esearch", {"db": "pubmed", "term": "cancer", "datetype": "pdat"}, "datetype"),
    ("esearch", {"db": "pubmed", "term": "cancer", "sort": "date; drop"}, "sort"),
    ("efetch", {"db": "pubmed", "ids": [str(i) for i in range(10_001)]}, "ids"),  # EFetch's 10,000 ceiling
    ("efetch", {"db": "pubmed", "ids": ["-1"]}, "ids"),
    ("efetch", {"db": "pubmed", "ids": []}, "ids"),
    ("efetch", {"db": "pubmed", "ids": ["33658472", "3365x472"]}, "ids"),
    ("efetch", {"db": "pubmed", "ids": "33658472"}, "ids"),
    ("efetch", {"db": "genes", "ids": ["1"]}, "db"),
    ("efetch", {"db": "pubmed", "ids": ["1"], "rettype": "pdf"}, "rettype"),
    ("efetch", {"db": "pubmed", "ids": ["1"], "retmode": "json"}, "retmode"),
]


@pytest.mark.parametrize(
    ("op", "kwargs", "argument"), INVALID_CALLS, ids=[f"{op}-{arg}-{i}" for i, (op, _, arg) in enumerate(INVALID_CALLS)]
)
def test_invalid_arguments_return_error_record_without_request(
    idle_server: FaultServer, op: str, kwargs: dict[str, Any], argument: str
) -> None:
    client = _client(idle_server)
    record = getattr(client, op)(**kwargs)
    assert set(record) == {"error", "tool"}
    assert record["tool"] == op
    assert re.search(rf"\b{argument}\b", record["error"]), record["error"]
    assert idle_server.requests == []
    assert client.http.attempts == 0


def test_esearch_returns_ids_count_and_verbatim_translation(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default("/esearch.fcgi", Reply.json(ESEARCH_BODY))
    record = client.esearch("pubmed", "cancer", retmax=3, mindate="2020", maxdate="2020/12/31", sort="relevance")
    assert record == {
        "count": 184321,
        "ids": ["33658472", "33657891", "33656204"],
        "query_translation": QUERY_TRANSLATION,
        "tool": "esearch",
    }
    query = fault_server.hits("/esearch.fcgi")[0].query
    assert query["tool"] == ["flux"] and query["email"] == [EMAIL] and "api_key" not in query
    assert query["retmode"] == ["json"] and query["term"] == ["cancer"] and query["retmax"] == ["3"]
    assert query["mindate"] == ["2020"] and query["maxdate"] == ["2020/12/31"] and query["datetype"] == ["pdat"]


def test_esearch_history_and_warnings(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default("/esearch.fcgi", Reply.json(ESEARCH_HISTORY_BODY))
    record = client.esearch("pubmed", "zzyzxqq", usehistory=True)
    assert record["webenv"] == "MCID_65f1c2a9e4b0d1234567890a" and record["query_key"] == "1"
    assert record["warnings"] == {"phrasesnotfound": ["zzyzxqq"], "outputmessages": ["No items found."]}
    assert fault_server.hits("/esearch.fcgi")[0].query["usehistory"] == ["y"]


def test_api_key_is_sent_but_redacted_from_errors(fault_server: FaultServer) -> None:
    fault_server.default("/esearch.fcgi", Reply.error(500))
    client = make_eutils_client(
        fault_server.url, email=EMAIL, api_key="s3cretkey", max_attempts=2, backoff_initial=0.01, backoff_max=0.05
    )
    record = client.esearch("pubmed", "cancer")
    client.close()
    assert fault_server.hits("/esearch.fcgi")[0].query["api_key"] == ["s3cretkey"]
    assert "s3cretkey" not in json.dumps(record)


def test_rate_follows_api_key() -> None:
    with_key = make_eutils_client("http://eutils-with-key.invalid", email=EMAIL, api_key="k")
    without_key = make_eutils_client("http://eutils-without-key.invalid", email=EMAIL)
    # 90 % of NCBI's documented 10 and 3 requests/s: arrivals jitter, so sends keep a margin under the limit.
    assert with_key.http.limiter.interval == pytest.approx(1 / 9)
    assert without_key.http.limiter.interval == pytest.approx(1 / 2.7)
    capped = make_eutils_client("http://eutils-capped.invalid", email=EMAIL, api_key="k2", requests_per_second=50)
    assert capped.http.limiter.interval == pytest.approx(1 / 9)  # a caller cannot raise it


def test_429_with_retry_after_is_retried(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.script("/esearch.fcgi", Reply.error(429, retry_after="0"), Reply.json(ESEARCH_BODY))
    record = client.esearch("pubmed", "cancer")
    assert len(fault_server.hits("/esearch.fcgi")) == 2
    assert record["ids"] == ["33658472", "33657891", "33656204"]


def test_repeated_500_is_an_error_record_with_url(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default("/esearch.fcgi", Reply.error(500))
    record = client.esearch("pubmed", "cancer")
    assert record["tool"] == "esearch" and "500" in record["error"]
    assert record["url"].startswith(f"{fault_server.url}/esearch.fcgi")
    assert len(fault_server.hits("/esearch.fcgi")) == 3


def test_ncbi_error_in_body_is_an_error_record(client: EUtilsClient, fault_server: FaultServer) -> None:
    body = {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {"ERROR": "Invalid query syntax"}}
    fault_server.default("/esearch.fcgi", Reply.json(json.dumps(body)))
    record = client.esearch("pubmed", "cancer[")
    assert record["tool"] == "esearch" and "Invalid query syntax" in record["error"] and "url" in record


def test_efetch_posts_the_ids_as_a_form_and_returns_xml_text(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default("/efetch.fcgi", Reply.ok(EFETCH_XML, "text/xml"))
    record = client.efetch("pubmed", ["33658472", 33657891])
    assert record["tool"] == "efetch" and record["text"] == EFETCH_XML
    [sent] = fault_server.hits("/efetch.fcgi")
    assert sent.method == "POST" and sent.query == {}
    assert sent.headers["Content-Type"] == "application/x-www-form-urlencoded"
    form = parse_qs(sent.body.decode())
    assert form["id"] == ["33658472,33657891"] and form["retmode"] == ["xml"] and form["rettype"] == ["abstract"]
    assert form["tool"] == ["flux"] and form["email"] == [EMAIL]
    assert [p.id for p in parse_pubmed_xml(record["text"], "efetch").papers] == ["33658472"]


def test_efetch_error_document_is_an_error_record(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default(
        "/efetch.fcgi", Reply.ok("<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>", "text/xml")
    )
    record = client.efetch("pubmed", ["1"])
    assert record["tool"] == "efetch" and "Empty id list - nothing todo" in record["error"]
    assert record["error"].startswith("NCBI E-utilities") and "text" not in record


def test_malformed_json_is_an_error_record(client: EUtilsClient, fault_server: FaultServer) -> None:
    fault_server.default("/esearch.fcgi", Reply.malformed("<html>Service unavailable</html>"))
    record = client.esearch("pubmed", "cancer")
    assert record["tool"] == "esearch" and "url" in record and "JSON" in record["error"]
    assert len(fault_server.hits("/esearch.fcgi")) == 3  # a proxy's error page is transient: retried
