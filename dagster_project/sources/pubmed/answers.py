"""E-utilities answers as plain dicts, or UpstreamError when NCBI answered 200 with an error or a shape it does not
document ("The E-utilities In-Depth", NBK25499: ESearch, ESummary, ELink and EInfo in `retmode=json`; EPost and
EFetch in XML only).

NCBI reports many failures inside a 200 answer: an `ERROR` in the esearchresult, an `error` per uid in an ESummary
result ("cannot get document summary"), an `ERROR` element in an ePostResult or eFetchResult. Each is raised here as
UpstreamError, so the client turns it into an error record like any failed request.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

Record = dict[str, Any]


class UpstreamError(RuntimeError):
    """NCBI answered 200 but with an error or an unexpected shape."""


def esearch_result(body: Any) -> Record:
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
    reported = (body.get("error") or body.get("ERROR")) if isinstance(body, dict) else None
    return f"NCBI error: {nested or reported}" if nested or reported else f"unexpected answer: no {key!r}"


def _nonempty(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value}


def efetch_error(text: str) -> str | None:
    """EFetch answers some failures with 200 and an eFetchResult ERROR instead of a PubmedArticleSet."""
    head = text[:2000]
    if "<eFetchResult>" not in head:
        return None
    start, end = head.find("<ERROR>"), head.find("</ERROR>")
    return head[start + len("<ERROR>") : end].strip() if 0 <= start < end else "eFetchResult without records"


def esummary_result(body: Any) -> Record:
    """Document summaries in the order NCBI lists `uids`; uids it has no summary for go to `missing`."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("uids"), list):
        raise UpstreamError(_upstream_message(body, result, "result"))
    summaries, missing = [], []
    for uid in result["uids"]:
        summary = result.get(str(uid))
        if not isinstance(summary, dict) or summary.get("error"):
            missing.append(str(uid))
        else:
            summaries.append(summary)
    return {"summaries": summaries, "missing": missing, "tool": "esummary"}


def elink_result(body: Any, linkname: str) -> Record:
    """The ids one link (`linkname`, e.g. pubmed_pubmed_citedin) reaches from the ids asked, in NCBI's order;
    an id with no such link reaches nothing (NCBI leaves the linksetdb out)."""
    linksets = body.get("linksets") if isinstance(body, dict) else None
    if not isinstance(linksets, list):
        raise UpstreamError(_upstream_message(body, None, "linksets"))
    ids: list[str] = []
    for linkset in linksets:
        if not isinstance(linkset, dict):
            raise UpstreamError("unexpected answer: a linkset is not an object")
        if linkset.get("ERROR"):
            raise UpstreamError(f"NCBI error: {linkset['ERROR']}")
        for linksetdb in linkset.get("linksetdbs") or []:
            if linksetdb.get("linkname") == linkname:
                ids += [str(link["id"] if isinstance(link, dict) else link) for link in linksetdb.get("links", [])]
    return {"ids": list(dict.fromkeys(ids)), "linkname": linkname, "tool": "elink"}


def einfo_result(body: Any) -> Record:
    """A database's searchable fields (name, full name) and link names, from EInfo's dbinfo."""
    result = body.get("einforesult") if isinstance(body, dict) else None
    info = result.get("dbinfo") if isinstance(result, dict) else None
    info = info[0] if isinstance(info, list) and info else info
    if not isinstance(info, dict) or not isinstance(info.get("fieldlist"), list):
        raise UpstreamError(_upstream_message(body, result, "einforesult.dbinfo.fieldlist"))
    fields = [(str(f["name"]), str(f.get("fullname", ""))) for f in info["fieldlist"]]
    links = [str(link["name"]) for link in info.get("linklist") or []]
    return {
        "db": info.get("dbname", ""),
        "count": int(info.get("count") or 0),
        "fields": fields,
        "links": links,
        "last_update": info.get("lastupdate", ""),
        "tool": "einfo",
    }


def epost_result(text: str) -> Record:
    """The history-server handle (WebEnv, query_key) for the posted ids; ids NCBI did not accept are listed."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UpstreamError(f"unexpected answer: EPost XML does not parse ({exc})") from None
    error = root.findtext("ERROR")
    if error:
        raise UpstreamError(f"NCBI error: {error.strip()}")
    webenv, query_key = root.findtext("WebEnv"), root.findtext("QueryKey")
    if not webenv or not query_key:
        raise UpstreamError("unexpected answer: no WebEnv or QueryKey in the ePostResult")
    invalid = [uid.text or "" for uid in root.iterfind("InvalidIdList/Id")]
    return {"webenv": webenv.strip(), "query_key": query_key.strip(), "invalid": invalid, "tool": "epost"}
