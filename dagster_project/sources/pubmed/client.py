"""NCBI E-utilities client (esearch and efetch, what the live PubMed pull uses): validates every argument before a
request and answers failures as data.

The arguments come from configuration a user writes (FLUX_PUBMED_QUERY and friends), so a bad argument or a failed
request comes back as an error record (`{"error": ..., "tool": ...}`, with `status` and `advice` when NCBI answered)
the caller can report, never as a wasted request against NCBI's rate limit.

The contract ("The E-utilities In-Depth", NCBI Bookshelf NBK25499): ESearch by GET, at most 10,000 UIDs per answer
(PubMed serves only the first 9,999 of a result set; windows.py walks past that); EFetch by POST with the id list in
an application/x-www-form-urlencoded body ("more than about 200 UIDs" should be POSTed, and a POST works for any
number), at most 10,000 records per request. Every request carries `tool` and `email`, and `api_key` when one is set.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from typing import Any

from dagster_project.core.http import HttpClient, HttpRequestError

EUTILS_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
VALID_DBS = frozenset({
    "pubmed", "pmc", "gene", "protein", "nuccore", "nucleotide", "mesh", "taxonomy", "structure", "genome",
    "assembly", "biosample", "bioproject", "sra", "snp", "clinvar", "dbvar", "gds", "geoprofiles", "homologene",
    "books", "omim", "medgen", "gtr", "cdd", "popset", "ipg", "nlmcatalog", "pccompound", "pcsubstance", "pcassay",
})
DATETYPES = frozenset({"pdat", "edat", "mdat"})
EFETCH_RETMODES = frozenset({"xml", "text"})
EFETCH_RETTYPES = frozenset({"abstract", "medline", "uilist", "docsum", "xml", "fasta", "gb", "gp", "full"})
PROVIDER = "NCBI E-utilities"
MAX_RETMAX = 10_000  # ESearch's documented retmax ceiling (PubMed itself serves 9,999: see windows.py)
MAX_IDS = 10_000  # EFetch's documented ceiling on records per request
# Ids per EFetch POST: some 500 PubMed XML records (1-3 MB) answer well within the timeout, a failed batch costs
# little to retry, and 10,000 records take 20 requests (2 s of NCBI's 10 requests/s with a key).
EFETCH_BATCH = 500
KEY_SETTING = "FLUX_NCBI_API_KEY"
_DATE_RE = re.compile(r"^(\d{4})(?:/(\d{2})(?:/(\d{2}))?)?$")
_SORT_RE = re.compile(r"^[A-Za-z_+]+$")
_API_KEY_RE = re.compile(r"(api_key=)[^&\s\]]+")

Record = dict[str, Any]


class InvalidArgument(ValueError):
    """An argument NCBI would reject (or silently misread); the message names the argument."""


class UpstreamError(RuntimeError):
    """NCBI answered 200 but with an error or an unexpected shape."""


def _error(tool: str, message: str, url: str | None = None, status: int | None = None, *,
           said: str | None = None, in_band: bool = False, transient: bool = False) -> Record:
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
        return (f"NCBI does not know this API key: set {KEY_SETTING} to a key from "
                "https://www.ncbi.nlm.nih.gov/account/settings/ (or unset it to pull at 3 requests/s)")
    if status == 429:
        return (f"NCBI allows 3 requests/s per IP without an API key and 10/s with one, counted across every client "
                f"on that IP or key: set {KEY_SETTING}, and run one live PubMed pull at a time")
    if status == 400 and ("email" in message or "tool" in message):
        return "NCBI refused Flux's identity: set FLUX_CONTACT_EMAIL to a reachable address"
    if tool == "esearch" and in_band and "retstart" not in message:  # a paging error is Flux's, not the query's
        return "NCBI could not run the search: check FLUX_PUBMED_QUERY"
    return None


def _redact(text: str) -> str:
    """Error records end up in logs and agent transcripts; the API key must not."""
    return _API_KEY_RE.sub(r"\1***", text)


# --- validation -------------------------------------------------------------------------------------------------


def _check_db(value: object, name: str = "db") -> str:
    if not isinstance(value, str) or value.strip().lower() not in VALID_DBS:
        raise InvalidArgument(f"{name} must be one of {sorted(VALID_DBS)}, got {value!r}")
    return value.strip().lower()


def _check_int(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f">= {low}"
        raise InvalidArgument(f"{name} must be {bounds}, got {value}")
    return value


def _parse_date(value: object, name: str) -> tuple[int, int | None, int | None]:
    match = _DATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidArgument(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD, got {value!r}")
    year, month, day = (int(part) if part else None for part in match.groups())
    try:
        dt.date(year or 1, month or 1, day or 1)
    except ValueError:
        raise InvalidArgument(f"{name} is not a real date: {value!r}") from None
    return year or 1, month, day


def _check_dates(mindate: str | None, maxdate: str | None, datetype: str | None) -> dict[str, str]:
    if (mindate is None) != (maxdate is None):
        missing = "maxdate" if maxdate is None else "mindate"
        raise InvalidArgument(f"mindate and maxdate must be given together; {missing} is missing")
    if datetype is not None and datetype not in DATETYPES:
        raise InvalidArgument(f"datetype must be one of {sorted(DATETYPES)}, got {datetype!r}")
    if mindate is None or maxdate is None:
        if datetype is not None:
            raise InvalidArgument("datetype needs mindate and maxdate")
        return {}
    low_y, low_m, low_d = _parse_date(mindate, "mindate")
    high_y, high_m, high_d = _parse_date(maxdate, "maxdate")
    if (low_y, low_m or 1, low_d or 1) > (high_y, high_m or 12, high_d or 31):
        raise InvalidArgument(f"mindate {mindate!r} is after maxdate {maxdate!r}")
    return {"mindate": mindate, "maxdate": maxdate, "datetype": datetype or "pdat"}


def _check_ids(ids: object, limit: int) -> str:
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        raise InvalidArgument(f"ids must be a list of numeric UIDs, got {type(ids).__name__}")
    if not ids:
        raise InvalidArgument("ids must not be empty")
    if len(ids) > limit:
        raise InvalidArgument(f"ids has {len(ids)} entries; at most {limit} are allowed")
    cleaned = []
    for uid in ids:
        text = str(uid).strip() if isinstance(uid, str | int) and not isinstance(uid, bool) else ""
        if not (text.isascii() and text.isdigit()):
            raise InvalidArgument(f"ids must contain digits only, got {uid!r}")
        cleaned.append(text)
    return ",".join(cleaned)


def _check_term(term: object) -> str:
    if not isinstance(term, str) or not term.strip():
        raise InvalidArgument("term must be a non-empty search string")
    return term.strip()


# --- response shapes ----------------------------------------------------------------------------------------------


def _esearch_result(body: Any) -> Record:
    result = body.get("esearchresult") if isinstance(body, dict) else None
    if not isinstance(result, dict) or "idlist" not in result:
        raise UpstreamError(_upstream_message(body, result, "esearchresult"))
    record: Record = {
        "count": int(result.get("count", 0)),
        "ids": [str(uid) for uid in result["idlist"]],
        "query_translation": result.get("querytranslation", ""),
        "tool": "esearch",
    }
    if "webenv" in result:
        record |= {"webenv": result["webenv"], "query_key": str(result.get("querykey", ""))}
    warnings = _nonempty({**(result.get("warninglist") or {}), **(result.get("errorlist") or {})})
    if warnings:
        record["warnings"] = warnings
    return record


def _upstream_message(body: Any, part: Any, key: str) -> str:
    nested = part.get("ERROR") if isinstance(part, dict) else None
    reported = body.get("error") if isinstance(body, dict) else None
    return f"NCBI error: {nested or reported}" if nested or reported else f"unexpected answer: no {key!r}"


def _nonempty(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value}


# --- client -------------------------------------------------------------------------------------------------------


def _efetch_error(text: str) -> str | None:
    """EFetch answers some failures with 200 and an eFetchResult ERROR instead of a PubmedArticleSet."""
    head = text[:2000]
    if "<eFetchResult>" not in head:
        return None
    start, end = head.find("<ERROR>"), head.find("</ERROR>")
    return head[start + len("<ERROR>"):end].strip() if 0 <= start < end else "eFetchResult without records"


class EUtilsClient:
    """esearch (GET) and efetch (POST) with up-front validation; every answer is a dict, errors included."""

    def __init__(self, http: HttpClient, *, tool: str = "flux", email: str, api_key: str | None = None) -> None:
        if not email or "@" not in email:
            raise ValueError("NCBI requires a contact email for E-utilities")
        self.http = http
        self.identity = {"tool": tool, "email": email} | ({"api_key": api_key} if api_key else {})

    def close(self) -> None:
        self.http.close()

    def esearch(self, db: str, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None,
                maxdate: str | None = None, datetype: str | None = None, sort: str | None = None,
                usehistory: bool = False) -> Record:
        def params() -> Record:
            query = {"db": _check_db(db), "term": _check_term(term),
                     "retmax": _check_int(retmax, "retmax", 1, MAX_RETMAX),
                     "retstart": _check_int(retstart, "retstart", 0)} | _check_dates(mindate, maxdate, datetype)
            if sort is not None:
                if not isinstance(sort, str) or not _SORT_RE.match(sort):
                    raise InvalidArgument(f"sort must be a field name such as 'relevance' or 'pub_date', got {sort!r}")
                query["sort"] = sort
            return query | ({"usehistory": "y"} if usehistory else {})

        return self._json_call("esearch", "esearch.fcgi", params, _esearch_result)

    def efetch(self, db: str, ids: Sequence[str | int], rettype: str = "abstract", retmode: str = "xml") -> Record:
        """Records for up to MAX_IDS ids, POSTed as a form so that no id list ever lengthens a URL."""

        def params() -> Record:
            if rettype not in EFETCH_RETTYPES:
                raise InvalidArgument(f"rettype must be one of {sorted(EFETCH_RETTYPES)}, got {rettype!r}")
            if retmode not in EFETCH_RETMODES:
                raise InvalidArgument(f"retmode must be one of {sorted(EFETCH_RETMODES)}, got {retmode!r}")
            return {"db": _check_db(db), "id": _check_ids(ids, MAX_IDS), "rettype": rettype, "retmode": retmode}

        def fetch(query: Record) -> Record:
            text = self.http.post_text("efetch.fcgi", query)
            refused = _efetch_error(text)
            if refused is not None:
                raise UpstreamError(f"NCBI error: {refused}")
            return {"text": text, "retmode": retmode, "rettype": rettype, "tool": "efetch"}

        return self._call("efetch", "efetch.fcgi", params, fetch)

    def _json_call(self, tool: str, path: str, params: Callable[[], Record],
                   shape: Callable[[Any], Record]) -> Record:
        def send(query: Record) -> Record:
            body = self.http.get_json(path, **query, retmode="json")
            try:
                return shape(body)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise UpstreamError(f"unexpected answer shape: {exc!r}") from None

        return self._call(tool, path, params, send)

    def _call(self, tool: str, path: str, params: Callable[[], Record], send: Callable[[Record], Record]) -> Record:
        """Validate first (no request on bad input); turn HTTP and upstream failures into error records."""
        try:
            query = params()
        except InvalidArgument as exc:
            return _error(tool, str(exc))
        try:
            return send(query | self.identity)
        except HttpRequestError as exc:
            return _error(tool, str(exc), exc.url, exc.status, said=exc.reason,
                          transient=exc.retryable)
        except UpstreamError as exc:
            return _error(tool, f"{PROVIDER}: {exc}", self.http.url_for(path), in_band=True)


def make_eutils_client(base_url: str = EUTILS_BASE_URL, *, email: str, api_key: str | None = None,
                       tool: str = "flux", **http_kwargs: Any) -> EUtilsClient:
    """NCBI allows 10 requests/s with an API key and 3 without; exceeding it gets the key or IP blocked,
    so a caller may lower the rate but never raise it past NCBI's limit."""
    limit = 10.0 if api_key else 3.0
    rate = min(float(http_kwargs.pop("requests_per_second", limit)), limit)
    # The key travels in every request (ESearch URLs, EFetch forms): scrub it from errors and the retry log.
    http_kwargs.setdefault("provider", PROVIDER)  # every final error starts with who answered
    http = HttpClient(base_url, contact_email=email, requests_per_second=rate, secrets=(api_key,), **http_kwargs)
    return EUtilsClient(http, tool=tool, email=email, api_key=api_key)
