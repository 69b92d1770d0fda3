"""NCBI E-utilities client — esearch and efetch (the live PubMed pull and question-time searches), esummary, elink,
einfo and epost (question-time article facts, citing and similar articles, large id sets): validates every argument
before a request and answers failures as data.

The arguments come from configuration a user writes (FLUX_PUBMED_QUERY and friends), so a bad argument or a failed
request comes back as an error record (`{"error": ..., "tool": ...}`, with `status` and `advice` when NCBI answered)
the caller can report, never as a wasted request against NCBI's rate limit.

The contract ("The E-utilities In-Depth", NCBI Bookshelf NBK25499): ESearch by GET, at most 10,000 UIDs per answer
(PubMed serves only the first 9,999 of a result set; windows.py walks past that); EFetch by POST with the id list in
an application/x-www-form-urlencoded body ("more than about 200 UIDs" should be POSTed, and a POST works for any
number), at most 10,000 records per request; ESummary and ELink are POSTed the same way, EInfo lists a database's
search fields (a term's `[tag]`s are checked against it) and EPost puts a long id list on the history server. Every
request carries `tool` and `email`, and `api_key` when one is set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.sources.pubmed.answers import (
    Record,
    UpstreamError,
    efetch_error,
    einfo_result,
    elink_result,
    epost_result,
    esearch_result,
    esummary_result,
)
from dagster_project.sources.pubmed.arguments import (
    VALID_DBS as VALID_DBS,  # re-exported: the package's public list of databases
)
from dagster_project.sources.pubmed.arguments import (
    InvalidArgument,
    check_dates,
    check_db,
    check_field_tags,
    check_ids,
    check_int,
    check_term,
    field_tags,
    unknown_field_tags,
)

EUTILS_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
EFETCH_RETMODES = frozenset({"xml", "text"})
EFETCH_RETTYPES = frozenset({"abstract", "medline", "uilist", "docsum", "xml", "fasta", "gb", "gp", "full"})
PROVIDER = "NCBI E-utilities"
MAX_RETMAX = 10_000  # ESearch's documented retmax ceiling (PubMed itself serves 9,999: see windows.py)
MAX_IDS = 10_000  # EFetch's documented ceiling on records per request
# Ids per EFetch POST: some 500 PubMed XML records (1-3 MB) answer well within the timeout, a failed batch costs
# little to retry, and 10,000 records take 20 requests (2 s of NCBI's 10 requests/s with a key).
EFETCH_BATCH = 500
MAX_SUMMARIES = 500  # ESummary ids per request: NCBI serves up to 10,000 docsums, but JSON for 500 is already ~1 MB
MAX_LINK_IDS = 200  # ELink ids per request (linking many ids at once is answered in one combined linkset)
MAX_POST_IDS = 100_000  # EPost: NCBI sets no documented cap; this bounds what one question may post
KEY_SETTING = "FLUX_NCBI_API_KEY"
_SORT_RE = re.compile(r"^[A-Za-z_+]+$")
_API_KEY_RE = re.compile(r"(api_key=)[^&\s\]]+")


def _error(
    tool: str,
    message: str,
    url: str | None = None,
    status: int | None = None,
    *,
    said: str | None = None,
    in_band: bool = False,
    transient: bool = False,
) -> Record:
    """An error record; `said` is NCBI's own words (status and body, without the URL) that choose the advice;
    `transient` marks a failure another try may mend (a 429 or 5xx, a timeout, a dropped connection)."""
    record: Record = {"error": _redact(message), "tool": tool}
    if transient:
        record["transient"] = True
    if url is not None:
        record["url"] = _redact(url)
    if status is not None:
        record["status"] = status
    advice = _advice(tool, said or message, status, in_band)
    if advice:
        record["advice"] = advice
    return record


def _advice(tool: str, message: str, status: int | None, in_band: bool) -> str | None:
    """The setting that changes NCBI's answer, from what it said: a 400 names its cause in the body, and an error
    inside a 200 ESearch answer (`in_band`) is about the search itself."""
    if "API key invalid" in message:
        return (
            f"NCBI does not know this API key: set {KEY_SETTING} to a key from "
            "https://www.ncbi.nlm.nih.gov/account/settings/ (or unset it to pull at 3 requests/s)"
        )
    if status == 429:
        return (
            f"NCBI allows 3 requests/s per IP without an API key and 10/s with one, counted across every client "
            f"on that IP or key: set {KEY_SETTING}, and run one live PubMed pull at a time"
        )
    if status == 400 and ("email" in message or "tool" in message):
        return "NCBI refused Flux's identity: set FLUX_CONTACT_EMAIL to a reachable address"
    if tool == "esearch" and in_band and "retstart" not in message:  # a paging error is Flux's, not the query's
        return "NCBI could not run the search: check FLUX_PUBMED_QUERY"
    return None


def _redact(text: str) -> str:
    """Error records end up in logs and agent transcripts; the API key must not."""
    return _API_KEY_RE.sub(r"\1***", text)


# --- client -------------------------------------------------------------------------------------------------------


class EUtilsClient:
    """The six E-utilities with up-front validation; every answer is a dict, errors included. EInfo's field list is
    read once per database and kept, so checking a term's field tags costs one request per process."""

    def __init__(self, http: HttpClient, *, tool: str = "flux", email: str, api_key: str | None = None) -> None:
        if not email or "@" not in email:
            raise ValueError("NCBI requires a contact email for E-utilities")
        self.http = http
        self.identity = {"tool": tool, "email": email} | ({"api_key": api_key} if api_key else {})
        self._fields: dict[str, list[tuple[str, str]]] = {}

    def close(self) -> None:
        self.http.close()

    @property
    def requests(self) -> int:
        """Requests sent so far (retries included): what a question spent of NCBI's rate limit."""
        return self.http.attempts

    def esearch(
        self,
        db: str,
        term: str,
        retmax: int = 20,
        retstart: int = 0,
        mindate: str | None = None,
        maxdate: str | None = None,
        datetype: str | None = None,
        sort: str | None = None,
        usehistory: bool = False,
        check_fields: bool = False,
    ) -> Record:
        """`check_fields`: refuse a `[tag]` EInfo does not list for `db` (NCBI would search its words in all fields)."""

        def params() -> Record:
            query = {
                "db": check_db(db),
                "term": check_term(term),
                "retmax": check_int(retmax, "retmax", 1, MAX_RETMAX),
                "retstart": check_int(retstart, "retstart", 0),
            } | check_dates(mindate, maxdate, datetype)
            if sort is not None:
                if not isinstance(sort, str) or not _SORT_RE.match(sort):
                    raise InvalidArgument(f"sort must be a field name such as 'relevance' or 'pub_date', got {sort!r}")
                query["sort"] = sort
            if check_fields and field_tags(query["term"]):  # EInfo is asked only for a term with tags
                check_field_tags(query["term"], self._known_fields(query["db"]))
            return query | ({"usehistory": "y"} if usehistory else {})

        return self._json_call("esearch", "esearch.fcgi", params, esearch_result)

    def efetch(self, db: str, ids: Sequence[str | int], rettype: str = "abstract", retmode: str = "xml") -> Record:
        """Records for up to MAX_IDS ids, POSTed as a form so that no id list ever lengthens a URL."""

        def params() -> Record:
            if rettype not in EFETCH_RETTYPES:
                raise InvalidArgument(f"rettype must be one of {sorted(EFETCH_RETTYPES)}, got {rettype!r}")
            if retmode not in EFETCH_RETMODES:
                raise InvalidArgument(f"retmode must be one of {sorted(EFETCH_RETMODES)}, got {retmode!r}")
            return {"db": check_db(db), "id": check_ids(ids, MAX_IDS), "rettype": rettype, "retmode": retmode}

        def fetch(query: Record) -> Record:
            text = self.http.post_text("efetch.fcgi", query)
            refused = efetch_error(text)
            if refused is not None:
                raise UpstreamError(f"NCBI error: {refused}")
            return {"text": text, "retmode": retmode, "rettype": rettype, "tool": "efetch"}

        return self._call("efetch", "efetch.fcgi", params, fetch)

    def esummary(
        self,
        db: str,
        ids: Sequence[str | int] = (),
        *,
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int = 0,
        retmax: int = MAX_SUMMARIES,
    ) -> Record:
        """Document summaries for up to MAX_SUMMARIES ids, or for a history-server set (`webenv` + `query_key`,
        read `retmax` at a time from `retstart`); POSTed, like EFetch."""

        def params() -> Record:
            query: Record = {"db": check_db(db)}
            if webenv or query_key:
                if not (webenv and query_key and str(query_key).isdigit()):
                    raise InvalidArgument("webenv and a numeric query_key must be given together")
                if ids:
                    raise InvalidArgument("give ids or a history set (webenv + query_key), not both")
                return query | {
                    "WebEnv": webenv,
                    "query_key": str(query_key),
                    "retstart": check_int(retstart, "retstart", 0),
                    "retmax": check_int(retmax, "retmax", 1, MAX_SUMMARIES),
                }
            return query | {"id": check_ids(ids, MAX_SUMMARIES)}

        def send(query: Record) -> Record:
            return _shaped(esummary_result, self.http.post_json("esummary.fcgi", query | {"retmode": "json"}))

        return self._call("esummary", "esummary.fcgi", params, send)

    def elink(self, dbfrom: str, ids: Sequence[str | int], linkname: str, db: str | None = None) -> Record:
        """The ids `linkname` reaches from `ids` (pubmed_pubmed: similar articles; pubmed_pubmed_citedin: the
        PubMed articles citing them; pubmed_pubmed_refs: their references), all of them together."""

        def params() -> Record:
            source = check_db(dbfrom, "dbfrom")
            target = check_db(db if db is not None else linkname.split("_")[1] if "_" in linkname else "", "db")
            if not linkname.startswith(f"{source}_{target}"):
                raise InvalidArgument(f"linkname {linkname!r} does not link {source} to {target}")
            return {
                "dbfrom": source,
                "db": target,
                "id": check_ids(ids, MAX_LINK_IDS),
                "linkname": linkname,
                "cmd": "neighbor",
            }

        def send(query: Record) -> Record:
            return _shaped(
                lambda body: elink_result(body, linkname),
                self.http.post_json("elink.fcgi", query | {"retmode": "json"}),
            )

        return self._call("elink", "elink.fcgi", params, send)

    def einfo(self, db: str) -> Record:
        """A database's searchable fields and link names."""
        return self._json_call("einfo", "einfo.fcgi", lambda: {"db": check_db(db), "version": "2.0"}, einfo_result)

    def epost(self, db: str, ids: Sequence[str | int]) -> Record:
        """Post ids to the history server (for sets too long for one request): the WebEnv and query_key to read
        them back with `esummary` / `efetch`."""

        def params() -> Record:
            return {"db": check_db(db), "id": check_ids(ids, MAX_POST_IDS)}

        return self._call(
            "epost", "epost.fcgi", params, lambda query: epost_result(self.http.post_text("epost.fcgi", query))
        )

    def unknown_tags(self, db: str, term: str) -> list[str] | Record:
        """The `[tag]`s of `term` EInfo does not list for `db` (an error record when EInfo cannot be read)."""
        try:
            fields = self._known_fields(check_db(db))
        except _EInfoFailed as exc:
            return exc.record
        return unknown_field_tags(term, fields)

    def _known_fields(self, db: str) -> list[tuple[str, str]]:
        """EInfo's fields for `db`, asked once; an EInfo failure is raised as the error it is."""
        if db not in self._fields:
            info = self.einfo(db)
            if "error" in info:
                raise _EInfoFailed(info)
            self._fields[db] = info["fields"]
        return self._fields[db]

    def _json_call(self, tool: str, path: str, params: Callable[[], Record], shape: Callable[[Any], Record]) -> Record:
        return self._call(
            tool, path, params, lambda query: _shaped(shape, self.http.get_json(path, **query, retmode="json"))
        )

    def _call(self, tool: str, path: str, params: Callable[[], Record], send: Callable[[Record], Record]) -> Record:
        """Validate first (no request on bad input); turn HTTP and upstream failures into error records."""
        try:
            query = params()
        except InvalidArgument as exc:
            return _error(tool, str(exc))
        except _EInfoFailed as exc:
            return exc.record
        try:
            return send(query | self.identity)
        except HttpRequestError as exc:
            return _error(tool, str(exc), exc.url, exc.status, said=exc.reason, transient=exc.retryable)
        except UpstreamError as exc:
            return _error(tool, f"{PROVIDER}: {exc}", self.http.url_for(path), in_band=True)


class _EInfoFailed(Exception):
    """The field list a term's tags are checked against could not be read: the EInfo error record."""

    def __init__(self, record: Record) -> None:
        super().__init__(record["error"])
        self.record = record


def _shaped(shape: Callable[[Any], Record], body: Any) -> Record:
    try:
        return shape(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UpstreamError(f"unexpected answer shape: {exc!r}") from None


NCBI_PACE = 0.9  # the share of NCBI's documented rate that Flux sends at


def make_eutils_client(
    base_url: str = EUTILS_BASE_URL, *, email: str, api_key: str | None = None, tool: str = "flux", **http_kwargs: Any
) -> EUtilsClient:
    """NCBI allows 10 requests/s with an API key and 3 without; exceeding it gets the key or IP blocked,
    so a caller may lower the rate but never raise it past NCBI's limit. NCBI counts arrivals and Flux times sends:
    pacing at 90 % of the limit leaves room for a request that leaves late (a busy machine, a slow connection) to be
    followed by the next on time without the two landing in one of NCBI's seconds with two more."""
    limit = NCBI_PACE * (10.0 if api_key else 3.0)
    rate = min(float(http_kwargs.pop("requests_per_second", limit)), limit)
    # The key travels in every request (ESearch URLs, EFetch forms): scrub it from errors and the retry log.
    http_kwargs.setdefault("provider", PROVIDER)  # every final error starts with who answered
    # NCBI counts requests per key (per IP without one): every client in the process with the same key draws on one
    # limiter, so the ingest pull and question-time searches together stay under the limit.
    http_kwargs.setdefault("rate_limit_key", ("ncbi-eutils", api_key or "no-key"))
    http = HttpClient(base_url, contact_email=email, requests_per_second=rate, secrets=(api_key,), **http_kwargs)
    return EUtilsClient(http, tool=tool, email=email, api_key=api_key)
