"""NCBI E-utilities (/esearch.fcgi, /efetch.fcgi) as NCBI documents them, over a synthetic PubMed of N records.

What it enforces, and where each rule comes from (Entrez Programming Utilities Help, NCBI Bookshelf: "A General
Introduction to the E-utilities", NBK25497, and "The E-utilities In-Depth", NBK25499; NCBI Insights, "New API Keys
for the E-utilities", 2017-11-02, and "Release Plan for E-utility API Keys", 2018-08-14):
- Identity: every request names its `tool` and `email` (General Introduction, "Usage Guidelines and Requirements";
  NCBI contacts that address before it blocks a client). NCBI's 2009 policy announcement said a request without both
  "will return an error"; today's production server still answers such requests, so this server is stricter than
  NCBI on purpose: a missing one is a 400 with a JSON error body (`{"error": …, "missing": [...]}`, this server's
  wording: NCBI documents the rule, not the body), so a client that forgets its identity fails here, not later.
- API keys (the 2017/2018 announcements): `api_key` is optional; an unknown one is a 400
  `{"error": "API key invalid", "api-key": "<key>"}`.
- Rate: at most 3 requests per second per IP without a key, 10 per second per key; one more is a 429 with NCBI's
  JSON body `{"error": "API rate limit exceeded", "api-key": "<key or IP>", "count": "<n>", "limit": "<3|10>"}`.
  Arrivals are counted in a RateWindow; every client here is 127.0.0.1, and `count` is the request that
  overflowed the window (limit + 1).
- ESearch (In-Depth, ESearch): GET (or POST), `db=pubmed`, `retmode=json` (the only mode served here) in the real
  `esearchresult` shape: header, count, retmax, retstart, idlist, translationset, querytranslation, and warninglist /
  errorlist when there is something to say. `count` is always the whole set. PubMed serves only the first 9,999
  records: `retstart` over 9998 is NCBI's "Search Backend failed" ERROR inside the esearchresult of a 200 answer
  (reports of the live server also show it as a 400; the 200 is the harder case for a client), and a `retmax` that
  would reach past record 9,999 is clamped with NCBI's "Restrictions achieved" output message. `mindate` and
  `maxdate` (YYYY, YYYY/MM or YYYY/MM/DD, used together) limit by publication date (`datetype=pdat`, assumed when
  absent; other date types are an ERROR, since the synthetic records only have publication dates). A record whose
  date is a month or a span ("2019 Dec-2020 Jan") matches every range it overlaps, as a pdat range search does.
  Any term but the one the corpus answers finds nothing, with `phrasesnotfound` and "No items found.".
- EFetch (In-Depth, EFetch): "more than about 200 UIDs" should be sent by HTTP POST. A POST carries the parameters
  in an application/x-www-form-urlencoded body. A GET with more than 200 ids is answered 414 Request-URI Too Long:
  NCBI's advice made a hard rule. A real front end refuses a request line past a byte limit (Apache's default is
  8,190 bytes, some 750 eight-digit PMIDs), so a client that GETs long lists works in small tests and fails in
  production; here it fails at 201 ids. More than 10,000 ids in one request (EFetch's documented ceiling) is a 400
  eFetchResult ERROR; no id at all is NCBI's 200 "Empty id list - nothing todo". Records come back in the order
  asked, unknown ids left out, as a PubmedArticleSet with `Content-Type: text/xml; charset=UTF-8`.

Payloads: each PubmedArticle is the richest efetch record in the repository's tests (tests/unit/
test_pubmed_parser.py, PMID 33658472: structured abstract, MeSH, DOI in ELocationID and ArticleIdList) used as a
template, with the PMID, title, DOI and publication date substituted.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from tests.support.contract_server import ContractServer, RateWindow, RecordedRequest, Reply
from tests.support.pubmed_xml import HEADER, pubmed_article

KEY = "ncbi-contract-key-7d41"
QUERY = "(pathway[Title/Abstract]) AND (signaling OR metabolism) AND hasabstract"
CLIENT_IP = "127.0.0.1"
KEYLESS_LIMIT, KEYED_LIMIT = 3, 10
ESEARCH_SERVED = 9_999  # records of one result set ESearch serves for PubMed
GET_ID_LIMIT = 200
EFETCH_MAX = 10_000
FORM = "application/x-www-form-urlencoded"
XML = "text/xml; charset=UTF-8"
MONTHS = [calendar.month_abbr[m] for m in range(13)]
RETSTART_ERROR = (
    "Search Backend failed: Exception:\n'retstart' cannot be larger than 9998. For PubMed, ESearch can only retrieve "
    "the first 9,999 records matching the query. To obtain more than 9,999 PubMed records, consider using EDirect "
    "that contains additional logic to batch PubMed search results automatically so that an arbitrary number can be "
    "retrieved. For details see https://www.ncbi.nlm.nih.gov/books/NBK25499/"
)
_DATE = re.compile(r"^(\d{4})(?:/(\d{1,2})(?:/(\d{1,2}))?)?$")


@dataclass(frozen=True)
class Paper:
    """One synthetic record: its PMID and publication date, a day or a span (`low`..`high`, both included)."""

    pmid: str
    low: dt.date
    high: dt.date
    pubdate: str  # the PubDate element's content

    def overlaps(self, low: dt.date, high: dt.date) -> bool:
        return self.low <= high and low <= self.high

    def xml(self) -> str:
        return pubmed_article(
            self.pmid,
            self.pubdate,
            doi=f"10.5555/flux.{self.pmid}",
            title=f"Loss of <i>TP53</i> drives &amp; sustains tumour growth ({self.pmid}).",
        )


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _paper(pmid: int, day: dt.date, index: int, plain: bool) -> Paper:
    """Most records have a full date; every 40th only a month, every 97th a two-month span (a MedlineDate)."""
    y, m = day.year, day.month
    if plain or (index % 97 not in (13, 14) and index % 40 != 7):
        return Paper(str(pmid), day, day, f"<Year>{y}</Year><Month>{MONTHS[m]}</Month><Day>{day.day:02d}</Day>")
    if index % 40 == 7:
        return Paper(str(pmid), day.replace(day=1), _month_end(y, m), f"<Year>{y}</Year><Month>{MONTHS[m]}</Month>")
    ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
    span = f"{y} {MONTHS[m]}-{ny} {MONTHS[nm]}" if ny != y else f"{y} {MONTHS[m]}-{MONTHS[nm]}"
    return Paper(str(pmid), day.replace(day=1), _month_end(ny, nm), f"<MedlineDate>{span}</MedlineDate>")


def _json(status: int, body: Any) -> Reply:
    return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json; charset=UTF-8"})


def _fetch_error(status: int, message: str) -> Reply:
    body = f"<eFetchResult>\n\t<ERROR>{message}</ERROR>\n</eFetchResult>\n"
    return Reply(status, body.encode(), {"Content-Type": XML})


def _search_error(message: str) -> Reply:
    return _json(200, {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {"ERROR": message}})


def pdat_limit(value: str, *, end: bool) -> dt.date | None:
    """A YYYY, YYYY/MM or YYYY/MM/DD limit as a day: the first of its range, or the last when `end`."""
    match = _DATE.match(value.strip())
    if not match:
        return None
    year, month, day = (int(part) if part else None for part in match.groups())
    try:
        if month is None:
            return dt.date(year, 12, 31) if end else dt.date(year, 1, 1)
        if day is None:
            return _month_end(year, month) if end else dt.date(year, month, 1)
        return dt.date(year, month, day)
    except ValueError:
        return None


class EUtilsContractServer(ContractServer):
    provider = "NCBI E-utilities"

    def __init__(
        self,
        records: int = 12_500,
        *,
        first_year: int = 2016,
        last_year: int = 2025,
        keys: tuple[str, ...] = (KEY,),
        term: str = QUERY,
        crowded_day: dt.date | None = None,
        first_pmid: int = 30_000_001,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`records` PMIDs from `first_pmid` on, their publication dates spread evenly over the years given (all on
        `crowded_day` when one is named); `term` is the one query the corpus answers; `clock` times arrivals for
        the rate limits (a test's VirtualTime, which the client's pacing moves)."""
        super().__init__()
        start = dt.date(first_year, 1, 1)
        days = (dt.date(last_year, 12, 31) - start).days + 1
        self.papers = [
            _paper(
                first_pmid + i,
                crowded_day or start + dt.timedelta(days=i * days // records),
                i,
                plain=crowded_day is not None,
            )
            for i in range(records)
        ]
        self.by_pmid = {paper.pmid: paper for paper in self.papers}
        self.newest_first = sorted(self.papers, key=lambda p: (p.low, int(p.pmid)), reverse=True)
        self.term = term
        self.keys = set(keys)
        self.windows = {False: RateWindow(KEYLESS_LIMIT, clock=clock), True: RateWindow(KEYED_LIMIT, clock=clock)}

    # --- the front door: key, rate, identity ----------------------------------------------------------------------
    @staticmethod
    def params(request: RecordedRequest) -> dict[str, str]:
        """The query string and, for a form POST, the body: a CGI reads both."""
        merged = {k: v[0] for k, v in request.query.items()}
        if request.method == "POST" and request.headers.get("Content-Type", "").startswith(FORM):
            merged |= {k: v[0] for k, v in parse_qs(request.body.decode(), keep_blank_values=True).items()}
        return merged

    def serve(self, request: RecordedRequest) -> Reply:
        params = self.params(request)
        refused = self.admit(params)
        if refused is not None:
            return refused
        if request.path == "/esearch.fcgi":
            return self._esearch(params)
        if request.path == "/efetch.fcgi":
            return self._efetch(request.method, params)
        return Reply(404, b"<html><body>Not Found</body></html>", {"Content-Type": "text/html"})

    def admit(self, params: dict[str, str]) -> Reply | None:
        """The answer to a request refused for its key, its rate or its identity (None: it is served)."""
        key = params.get("api_key")
        if key is not None and key not in self.keys:
            return _json(400, {"error": "API key invalid", "api-key": key})
        limit = KEYED_LIMIT if key else KEYLESS_LIMIT
        if not self.windows[bool(key)].admit(key or CLIENT_IP):
            return _json(
                429,
                {
                    "error": "API rate limit exceeded",
                    "api-key": key or CLIENT_IP,
                    "count": str(limit + 1),
                    "limit": str(limit),
                },
            )
        missing = [name for name in ("tool", "email") if not params.get(name, "").strip()]
        if missing:
            return _json(
                400, {"error": "E-utility requests must include non-null tool and email parameters", "missing": missing}
            )
        return None

    # --- ESearch --------------------------------------------------------------------------------------------------
    def matching(self, low: dt.date | None = None, high: dt.date | None = None) -> list[Paper]:
        """The corpus's records in a publication-date range (all of them without one), newest first."""
        if low is None or high is None:
            return list(self.newest_first)
        return [paper for paper in self.newest_first if paper.overlaps(low, high)]

    def _esearch(self, params: dict[str, str]) -> Reply:
        if params.get("db") != "pubmed":
            return _search_error(f"Invalid db name specified: {params.get('db', '')}")
        if params.get("retmode") != "json":
            return Reply(400, b"retmode=json is the only mode this server answers", {"Content-Type": "text/plain"})
        term = params.get("term", "").strip()
        if not term:
            return _search_error("Empty term and query_key - nothing todo")
        retstart, retmax = params.get("retstart", "0"), params.get("retmax", "20")
        if not (retstart.isdigit() and retmax.isdigit()):
            return _search_error(f"Invalid retstart or retmax: {retstart!r}, {retmax!r}")
        dates = (params.get("mindate"), params.get("maxdate"))
        translation = f"{term}[All Fields]"
        low = high = None
        if dates[0] and dates[1]:
            if params.get("datetype", "pdat") != "pdat":
                return _search_error(f"Unsupported datetype: {params['datetype']} (this corpus has pdat only)")
            low, high = pdat_limit(dates[0], end=False), pdat_limit(dates[1], end=True)
            if low is None or high is None:
                return _search_error(f"Invalid date: mindate={dates[0]!r} maxdate={dates[1]!r}")
            translation += f" AND {low:%Y/%m/%d}:{high:%Y/%m/%d}[Date - Publication]"
        start, asked = int(retstart), int(retmax)
        if start > ESEARCH_SERVED - 1:
            return _search_error(RETSTART_ERROR)
        found = self.matching(low, high) if term == self.term else []
        served = min(asked, ESEARCH_SERVED - start)
        page = found[start : start + served]
        result: dict[str, Any] = {
            "count": str(len(found)),
            "retmax": str(len(page)),
            "retstart": str(start),
            "idlist": [paper.pmid for paper in page],
            "translationset": [],
            "querytranslation": translation,
        }
        messages = [f"Restrictions achieved. start and count adjusted to {start}, {served}"] if served < asked else []
        if term != self.term:
            result["errorlist"] = {"phrasesnotfound": [term], "fieldsnotfound": []}
            messages.append("No items found.")
        if messages:
            result["warninglist"] = {"phrasesignored": [], "quotedphrasesnotfound": [], "outputmessages": messages}
        return _json(200, {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result})

    # --- EFetch ---------------------------------------------------------------------------------------------------
    def _efetch(self, method: str, params: dict[str, str]) -> Reply:
        ids = [uid.strip() for uid in params.get("id", "").split(",") if uid.strip()]
        if method == "GET" and len(ids) > GET_ID_LIMIT:
            return Reply(
                414,
                b"<html><head><title>414 Request-URI Too Long</title></head><body><h1>Request-URI "
                b"Too Long</h1></body></html>",
                {"Content-Type": "text/html"},
            )
        if params.get("db") != "pubmed":
            return _fetch_error(400, f"Invalid db name specified: {params.get('db', '')}")
        if not ids:
            return _fetch_error(200, "Empty id list - nothing todo")
        if len(ids) > EFETCH_MAX:
            return _fetch_error(
                400, f"Too many UIDs in request: {len(ids)}; EFetch returns at most {EFETCH_MAX} records per request"
            )
        if params.get("retmode", "xml") != "xml":
            return _fetch_error(400, "retmode=xml is the only mode this server answers")
        articles = "".join(xml for xml in map(self.article_xml, ids) if xml)
        return Reply(
            200, f"{HEADER}<PubmedArticleSet>\n{articles}</PubmedArticleSet>\n".encode(), {"Content-Type": XML}
        )

    def article_xml(self, uid: str) -> str | None:
        """The PubmedArticle EFetch returns for a PMID (None: PubMed holds none)."""
        paper = self.by_pmid.get(uid)
        return paper.xml() if paper is not None else None
