"""PubMed live pulls against a server that holds them to NCBI's documented E-utilities contract
(tests/support/contracts/eutils.py). Sources: Entrez Programming Utilities Help, NCBI Bookshelf, "A General
Introduction to the E-utilities" (NBK25497: tool and email on every request; 3 requests/s per IP without an API key,
10/s with one) and "The E-utilities In-Depth" (NBK25499: ESearch retmax up to 10,000, and for PubMed only the first
records of a set, with EDirect's batching as the way past it; mindate/maxdate with datetype=pdat; EFetch by HTTP POST
for more than about 200 UIDs, at most 10,000 records per request); NCBI Insights, "New API Keys for the E-utilities"
(2017-11-02) and "Release Plan for E-utility API Keys" (2018-08-14: keys enforced from 2018-12-01, errors past the
rate).

Rules and the tests that enforce them:
- tool and email on every request, 400 without them: `test_every_request_names_tool_and_email_…`
- 429 past 3 requests/s without a key and 10/s with one, and Flux's client at its rate gets none:
  `test_the_server_answers_429_past_the_rate_and_flux_at_its_rate_gets_none` (both cases), and a 429 that comes
  anyway is retried: `test_a_429_from_ncbi_is_retried_and_the_pull_completes`
- an unknown api_key is a 400 "API key invalid", and the pull says to change FLUX_NCBI_API_KEY:
  `test_an_unknown_key_fails_the_pull_naming_flux_ncbi_api_key`
- EFetch by POST with a form body, in batches: `test_efetch_is_posted_as_a_form_in_batches`
- GET with more than 200 ids is 414; more than 10,000 ids is refused: `test_efetch_by_get_past_200_ids_is_414_…`
- ESearch serves only the first 9,999 records: `test_esearch_serves_only_the_first_9999_records`
- mindate/maxdate by publication date: `test_date_limits_select_by_publication_date`
- past 10,000 records, date windows with every id once: `test_a_pull_past_10000_records_walks_date_windows_…`
  (the headline; run with -s for its numbers), the record cap: `test_the_record_cap_keeps_the_newest_…`, a day
  that cannot be split: `test_a_single_day_with_10000_records_fails_naming_the_day`, and a query with no records:
  `test_a_query_that_finds_nothing_fails_naming_flux_pubmed_query`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs

import pytest

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.sources.pubmed import client as eutils
from dagster_project.sources.pubmed import parse_pubmed_xml
from dagster_project.sources.pubmed.source import SOURCE, SourcePullError
from tests.support.clock import VirtualTime, paced_in_virtual_time
from tests.support.contract_server import Reply
from tests.support.contracts.eutils import (
    CLIENT_IP,
    FORM,
    KEY,
    QUERY,
    RETSTART_ERROR,
    EUtilsContractServer,
    pdat_limit,
)

CONTACT = "curator@pathway-lab.org"
PMID = re.compile(r"<MedlineCitation[^>]*>\s*<PMID Version=\"1\">(\d+)</PMID>")
Serve = Callable[..., EUtilsContractServer]


@pytest.fixture
def virtual_time(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    """NCBI's rates kept in virtual time: Flux's limiters pace on it and the server counts arrivals on it, so a client
    that sends too fast is refused as in real time, and the seconds of pacing cost nothing."""
    return paced_in_virtual_time(monkeypatch)


@pytest.fixture
def serve(virtual_time: VirtualTime) -> Iterator[Serve]:
    """Start contract servers (each on a fresh port, so each gets fresh rate limiters); all stop at teardown."""
    started: list[EUtilsContractServer] = []

    def start(records: int = 300, **kwargs: object) -> EUtilsContractServer:
        server = EUtilsContractServer(records, clock=virtual_time, **kwargs).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _live(monkeypatch: pytest.MonkeyPatch, server: EUtilsContractServer, **env: str | None) -> FluxSettings:
    """Live-mode settings from FLUX_ variables, as a user sets them; None unsets one."""
    values: dict[str, str | None] = {
        "FLUX_SOURCE_MODE": "live",
        "FLUX_EUTILS_URL": server.url,
        "FLUX_NCBI_API_KEY": KEY,
        "FLUX_CONTACT_EMAIL": CONTACT,
        "FLUX_PUBMED_QUERY": QUERY,
        "FLUX_PUBMED_MAX_RECORDS": str(len(server.papers)),
        "FLUX_HTTP_MAX_ATTEMPTS": "2",
        "FLUX_HTTP_TIMEOUT": "10",
    } | env
    for name, value in values.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    return get_settings()


def _raw(server: EUtilsContractServer, rate: float) -> HttpClient:
    """A plain client with no E-utilities manners: its own rate, no retries."""
    return HttpClient(
        server.url, requests_per_second=rate, max_attempts=1, timeout=10.0, rate_limit_key=("raw", server.url)
    )


def _search(http: HttpClient, **params: object) -> dict:
    """One ESearch with Flux's identity and key unless `params` change them (None leaves a parameter out)."""
    query = {"db": "pubmed", "term": QUERY, "retmode": "json", "tool": "flux", "email": CONTACT, "api_key": KEY}
    query |= params
    return http.get_json("esearch.fcgi", **{k: v for k, v in query.items() if v is not None})


def _pmids(files: dict[str, bytes]) -> list[str]:
    """Every article's PMID in the pulled efetch files, duplicates kept (a scan: the parser is tested on its own)."""
    return [
        pmid for name, data in sorted(files.items()) if name.endswith(".xml") for pmid in PMID.findall(data.decode())
    ]


def _per_endpoint(server: EUtilsContractServer) -> dict[str, int]:
    return {path: len(server.hits(path)) for path in ("/esearch.fcgi", "/efetch.fcgi")}


def test_every_request_names_tool_and_email_and_a_request_without_them_is_refused(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(600)
    pulled = SOURCE.pull_live(_live(monkeypatch, server))
    assert sorted(_pmids(pulled.files)) == sorted(paper.pmid for paper in server.papers)
    assert {request.path for request in server.requests} == {"/esearch.fcgi", "/efetch.fcgi"}
    for request in server.requests:
        sent = server.params(request)
        assert (sent.get("tool"), sent.get("email"), sent.get("api_key")) == ("flux", CONTACT, KEY), request

    for params, missing in (({"email": None}, ["email"]), ({"tool": None, "email": None}, ["tool", "email"])):
        with pytest.raises(HttpRequestError) as refused:
            _search(_raw(server, 5), **params)
        assert refused.value.status == 400
        assert f'"missing": {json.dumps(missing)}' in refused.value.reason


@pytest.mark.parametrize(("key", "limit", "burst"), [(None, 3, 8), (KEY, 10, 16)], ids=["no-key", "key"])
def test_the_server_answers_429_past_the_rate_and_flux_at_its_rate_gets_none(
    serve: Serve, virtual_time: VirtualTime, key: str | None, limit: int, burst: int
) -> None:
    flooded = serve(50)
    raw = _raw(flooded, 25)  # far past either limit
    statuses, bodies = [], []
    for _ in range(burst):
        try:
            _search(raw, api_key=key, retmax=1)
            statuses.append(200)
        except HttpRequestError as exc:
            statuses.append(exc.status)
            bodies.append(exc.reason)
    assert 429 in statuses and statuses[:limit] == [200] * limit, statuses
    assert bodies[0] == "HTTP 429: " + json.dumps(
        {"error": "API rate limit exceeded", "api-key": key or CLIENT_IP, "count": str(limit + 1), "limit": str(limit)}
    )

    polite = serve(50)
    flux = eutils.make_eutils_client(polite.url, email=CONTACT, api_key=key, max_attempts=1, timeout=10.0)
    calls = 2 * limit + 1  # a little over two seconds' worth at the documented rate
    started = virtual_time()
    answers = [flux.esearch("pubmed", QUERY, retmax=5) for _ in range(calls)]
    elapsed = virtual_time() - started
    flux.close()
    assert [a.get("error") for a in answers] == [None] * calls and polite.statuses() == [200] * calls
    assert elapsed >= (calls - 1) / limit  # paced, not lucky: the sends were spread over the window


def test_a_429_from_ncbi_is_retried_and_the_pull_completes(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(120)
    body = json.dumps({"error": "API rate limit exceeded", "api-key": KEY, "count": "11", "limit": "10"})
    server.inject("/efetch.fcgi", Reply(429, body.encode(), {"Content-Type": "application/json"}))
    pulled = SOURCE.pull_live(_live(monkeypatch, server))
    assert server.statuses("/efetch.fcgi") == [429, 200]
    assert sorted(_pmids(pulled.files)) == sorted(paper.pmid for paper in server.papers)


def test_an_unknown_key_fails_the_pull_naming_flux_ncbi_api_key(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(50)
    with pytest.raises(SourcePullError) as failed:
        SOURCE.pull_live(_live(monkeypatch, server, FLUX_NCBI_API_KEY="revoked-key-0000"))
    message = str(failed.value)
    assert "NCBI E-utilities" in message and "HTTP 400" in message and "API key invalid" in message
    assert "FLUX_NCBI_API_KEY" in message and "revoked-key-0000" not in message
    assert failed.value.status == 400
    assert server.statuses() == [400]  # a refused key is not worth a retry


def test_efetch_is_posted_as_a_form_in_batches(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(1_200)
    pulled = SOURCE.pull_live(_live(monkeypatch, server))
    fetches = server.hits("/efetch.fcgi")
    assert [request.method for request in fetches] == ["POST"] * len(fetches)
    assert all(request.headers["Content-Type"].startswith(FORM) and "id" not in request.query for request in fetches)
    sizes = [len(parse_qs(request.body.decode())["id"][0].split(",")) for request in fetches]
    assert sizes == [eutils.EFETCH_BATCH, eutils.EFETCH_BATCH, 1_200 - 2 * eutils.EFETCH_BATCH]
    assert {request.method for request in server.hits("/esearch.fcgi")} == {"GET"}
    assert sorted(_pmids(pulled.files)) == sorted(paper.pmid for paper in server.papers)


def test_efetch_by_get_past_200_ids_is_414_and_past_10000_ids_is_refused(serve: Serve) -> None:
    server = serve(300)
    pmids = [paper.pmid for paper in server.papers]
    identity = {"db": "pubmed", "retmode": "xml", "tool": "flux", "email": CONTACT, "api_key": KEY}
    raw = _raw(server, 10)
    assert raw.get_text("efetch.fcgi", id=",".join(pmids[:200]), **identity).count("<PubmedArticle>") == 200
    with pytest.raises(HttpRequestError) as too_long:
        raw.get_text("efetch.fcgi", id=",".join(pmids[:201]), **identity)
    assert too_long.value.status == 414
    assert raw.post_text("efetch.fcgi", {"id": ",".join(pmids[:201]), **identity}).count("<PubmedArticle>") == 201
    with pytest.raises(HttpRequestError) as too_many:
        raw.post_text("efetch.fcgi", {"id": ",".join(str(n) for n in range(1, 10_002)), **identity})
    assert too_many.value.status == 400 and "Too many UIDs" in too_many.value.reason

    flux = eutils.make_eutils_client(server.url, email=CONTACT, api_key=KEY, max_attempts=1)
    assert flux.efetch("pubmed", pmids[:201])["text"].count("<PubmedArticle>") == 201  # POSTed: no 414
    before = len(server.requests)
    refused = flux.efetch("pubmed", [str(n) for n in range(1, 10_002)])
    assert "at most 10000" in refused["error"] and len(server.requests) == before  # never sent


def test_esearch_serves_only_the_first_9999_records(serve: Serve) -> None:
    server = serve(10_050)
    raw = _raw(server, 10)
    assert _search(raw, retstart=9_999, retmax=10)["esearchresult"] == {"ERROR": RETSTART_ERROR}
    clamped = _search(raw, retstart=9_990, retmax=100)["esearchresult"]
    assert (clamped["count"], clamped["retmax"], len(clamped["idlist"])) == ("10050", "9", 9)
    assert clamped["warninglist"]["outputmessages"] == ["Restrictions achieved. start and count adjusted to 9990, 9"]
    assert len(_search(raw, retmax=10_000)["esearchresult"]["idlist"]) == 9_999

    flux = eutils.make_eutils_client(server.url, email=CONTACT, api_key=KEY, max_attempts=1)
    record = flux.esearch("pubmed", QUERY, retstart=9_999, retmax=1)
    assert "cannot be larger than 9998" in record["error"] and record["error"].startswith("NCBI E-utilities")


def test_date_limits_select_by_publication_date(serve: Serve) -> None:
    server = serve(2_000)
    raw = _raw(server, 10)
    year = _search(raw, retmax=9_999, mindate="2019", maxdate="2019", datetype="pdat")["esearchresult"]
    expected = {p.pmid for p in server.papers if p.low.year <= 2019 <= p.high.year}
    assert set(year["idlist"]) == expected and int(year["count"]) == len(expected)
    assert year["querytranslation"].endswith("AND 2019/01/01:2019/12/31[Date - Publication]")
    span = next(p for p in server.papers if (p.low.year, p.low.month) != (p.high.year, p.high.month))
    for month in (span.low, span.high):  # a two-month MedlineDate matches both months
        limit = f"{month:%Y/%m}"
        found = _search(raw, retmax=9_999, mindate=limit, maxdate=limit)["esearchresult"]["idlist"]
        assert span.pmid in found
    day = f"{server.papers[0].low:%Y/%m/%d}"
    found = _search(raw, retmax=9_999, mindate=day, maxdate=day)["esearchresult"]["idlist"]
    assert server.papers[0].pmid in found and len(found) < 10


def test_a_pull_past_10000_records_walks_date_windows_and_gets_each_once(
    serve: Serve, virtual_time: VirtualTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(12_500)
    settings = _live(monkeypatch, server, FLUX_PUBMED_MAX_RECORDS="12500")
    started = virtual_time()
    pulled = SOURCE.pull_live(settings)
    elapsed = virtual_time() - started
    calls = _per_endpoint(server)
    summary = json.loads(pulled.files["esearch.json"])
    pmids = _pmids(pulled.files)
    print(
        f"\nPubMed pull past 10,000: {len(pmids)} ids ({len(set(pmids))} unique) of count {summary['count']}; "
        f"{len(summary['windows'])} date windows {summary['windows']}; {summary['duplicates']} ids seen in two "
        f"windows; esearch {calls['/esearch.fcgi']} calls, efetch {calls['/efetch.fcgi']} calls "
        f"({pulled.requests} requests); {elapsed:.1f} s of pacing (virtual time)"
    )

    assert len(pmids) == len(set(pmids)) == 12_500
    assert sorted(pmids) == sorted(paper.pmid for paper in server.papers)
    parsed = [parse_pubmed_xml(data.decode(), name) for name, data in pulled.files.items() if name.endswith(".xml")]
    assert sum(len(p.papers) for p in parsed) == 12_500 and not any(p.quarantined for p in parsed)
    assert summary["count"] == 12_500 and summary["ids"] == sorted(summary["ids"], key=int)
    windows = [(pdat_limit(w["mindate"], end=False), pdat_limit(w["maxdate"], end=True)) for w in summary["windows"]]
    assert len(windows) >= 2 and all(w["count"] <= 9_999 for w in summary["windows"])
    # Records whose date spans a window boundary come back from both windows and are kept once.
    straddling = sum(sum(paper.overlaps(*window) for window in windows) - 1 for paper in server.papers)
    assert straddling > 0 and summary["duplicates"] == straddling
    for request in server.hits("/esearch.fcgi"):
        sent = server.params(request)
        assert int(sent.get("retstart", 0)) + int(sent["retmax"]) <= 9_999
    assert calls["/efetch.fcgi"] == 12_500 // eutils.EFETCH_BATCH and pulled.requests == len(server.requests)
    assert set(server.statuses()) == {200}  # at 10 requests/s with a key, NCBI never had to say 429
    # Paced at 90 % of the keyed rate, not the anonymous one: in virtual time only the pacing moves the clock, so the
    # pull took exactly one keyed interval per request after the first.
    assert elapsed == pytest.approx((pulled.requests - 1) / (eutils.NCBI_PACE * 10.0))

    again = SOURCE.pull_live(settings)  # the same answer writes the same bytes: the raw zone records it once
    assert again.files == pulled.files and again.release == pulled.release


def test_the_record_cap_keeps_the_newest_records_of_a_windowed_pull(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(12_500)
    pulled = SOURCE.pull_live(_live(monkeypatch, server, FLUX_PUBMED_MAX_RECORDS="11000"))
    pmids = _pmids(pulled.files)
    assert len(pmids) == len(set(pmids)) == 11_000
    kept = set(pmids)
    dropped = [paper for paper in server.papers if paper.pmid not in kept]
    assert max(p.low for p in dropped) <= min(p.low for p in server.papers if p.pmid in kept)
    assert len(server.hits("/efetch.fcgi")) == 22


def test_a_single_day_with_10000_records_fails_naming_the_day(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(10_000, crowded_day=dt.date(2020, 3, 15))
    with pytest.raises(SourcePullError) as failed:
        SOURCE.pull_live(_live(monkeypatch, server))
    message = str(failed.value)
    assert "NCBI E-utilities" in message and "2020/03/15" in message and "10000" in message
    assert "FLUX_PUBMED_QUERY" in message
    assert server.hits("/efetch.fcgi") == []


def test_a_query_that_finds_nothing_fails_naming_flux_pubmed_query(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(20)
    with pytest.raises(SourcePullError) as failed:
        SOURCE.pull_live(_live(monkeypatch, server, FLUX_PUBMED_QUERY="zzyzxqq[Title]"))
    assert "NCBI E-utilities" in str(failed.value) and "FLUX_PUBMED_QUERY" in str(failed.value)
    assert server.hits("/efetch.fcgi") == []
