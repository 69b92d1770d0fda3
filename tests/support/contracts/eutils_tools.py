"""NCBI E-utilities for question-time literature tools: the ESearch/EFetch contract server (eutils.py) extended with
ESummary, ELink, EInfo and EPost, and ESearch answering recorded translations.

What it enforces beyond eutils.py, and where each rule comes from ("The E-utilities In-Depth", NBK25499):
- ESearch plays `dagster_project/evals/pubmed_translations.json`: a term listed there gets its recorded
  `querytranslation` and count, and the first ids of a synthetic result set (newest first). Any other term but the
  corpus's finds nothing, with NCBI's `phrasesnotfound` and "No items found.".
- ESummary (`retmode=json`, the v2.0 JSON DocSum shape: `result.uids` and one object per uid, with uid, pubdate,
  source, authors, title, pubtype, fulljournalname, …): at most 10,000 uids (the documented retmax ceiling); a uid
  PubMed does not hold gets `{"uid": …, "error": "cannot get document summary"}` inside a 200 answer; a GET with
  more than 200 ids is a 414, as for EFetch; a wrong db is NCBI's in-band `{"error": "Invalid db name specified"}`.
- ELink (`retmode=json`, `cmd=neighbor`): `linksets[].linksetdbs[]` for the link names PubMed lists in EInfo
  (pubmed_pubmed, pubmed_pubmed_citedin, pubmed_pubmed_refs); a PMID without such links gets a linkset without
  that linksetdb, as NCBI answers; `dbfrom` and `db` are required.
- EInfo (`retmode=json`, `version=2.0`): PubMed's field list (name and full name, the subset a search uses) and
  link list; without `db`, the database list.
- EPost (XML only): ids go to the history server, answered with an ePostResult holding QueryKey and WebEnv; ids
  that are not numbers are listed in InvalidIdList; ESummary reads a posted set back with `WebEnv` + `query_key`,
  `retstart` and `retmax`.
Key, rate and identity rules are eutils.py's, for every path.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

from tests.support.contract_server import RecordedRequest, Reply
from tests.support.contracts.eutils import GET_ID_LIMIT, XML, EUtilsContractServer, _json
from tests.support.pubmed_xml import pubmed_article

RECORDED = Path(__file__).resolve().parents[3] / "dagster_project" / "evals" / "pubmed_translations.json"
ESUMMARY_MAX = 10_000
LINKNAMES = ("pubmed_pubmed", "pubmed_pubmed_citedin", "pubmed_pubmed_refs")
# PubMed's EInfo fields a search uses (name, full name), as EInfo lists them.
FIELDS = [
    ("ALL", "All Fields"),
    ("UID", "UID"),
    ("FILT", "Filter"),
    ("TITL", "Title"),
    ("MESH", "MeSH Terms"),
    ("MAJR", "MeSH Major Topic"),
    ("AUTH", "Author"),
    ("JOUR", "Journal"),
    ("AFFL", "Affiliation"),
    ("SUBS", "Supplementary Concept"),
    ("PDAT", "Publication Date"),
    ("EDAT", "Entry Date"),
    ("PTYP", "Publication Type"),
    ("LANG", "Language"),
    ("SUBH", "MeSH Subheading"),
    ("TIAB", "Title/Abstract"),
    ("WORD", "Text Word"),
    ("FAUT", "First Author"),
    ("LAUT", "Last Author"),
    ("CRDT", "Create Date"),
    ("OTRM", "Other Term"),
    ("GRNT", "Grants and Funding"),
]
SHOWN_IDS = 20  # ids a recorded search can serve (the first page of its result set)


def recorded_exchanges(path: Path = RECORDED) -> dict[str, dict[str, Any]]:
    """term → {translation, count} for every exchange of the failure-mode set."""
    items = json.loads(path.read_text())["items"]
    return {x["term"]: x for item in items for x in item["exchanges"]}


def _ids_for(term: str, count: int) -> list[str]:
    """The first ids of a recorded term's result set: stable per term, newest (largest) first."""
    base = 38_000_000 + (zlib.crc32(term.encode()) % 90_000) * 10
    return [str(base + SHOWN_IDS - i) for i in range(min(count, SHOWN_IDS))]


class EUtilsToolsContractServer(EUtilsContractServer):
    def __init__(
        self,
        *args: Any,
        citations: dict[str, list[str]] | None = None,
        similar: dict[str, list[str]] | None = None,
        **kwargs: Any,
    ) -> None:
        """`citations`: PMID → the PMIDs citing it; `similar`: PMID → its similar articles."""
        super().__init__(*args, **kwargs)
        self.recorded = recorded_exchanges()
        self.links = {
            "pubmed_pubmed_citedin": citations or {},
            "pubmed_pubmed": similar or {},
            "pubmed_pubmed_refs": {},
        }
        for cited, citing in (citations or {}).items():
            for pmid in citing:
                self.links["pubmed_pubmed_refs"].setdefault(pmid, []).append(cited)
        self.summaries: dict[str, dict[str, Any]] = {}
        self.topics: dict[str, str] = {}  # PMID → the words of the recorded term that found it
        for term, exchange in self.recorded.items():
            topic = " ".join(re.findall(r"[A-Za-z0-9-]+(?=[^\[\]]*(?:\[|$))", re.sub(r"\[[^\]]*\]", " ", term)))
            for pmid in _ids_for(term, exchange["count"]):
                self.summaries[pmid] = _summary(pmid, f"{topic.replace(' AND ', ' and ')}: a cohort study")
                self.topics[pmid] = topic.replace(" AND ", " and ").replace(" OR ", " or ")
        for pmid in {p for table in self.links.values() for k, v in table.items() for p in (k, *v)}:
            self.summaries.setdefault(pmid, _summary(pmid, f"Article {pmid}"))
        self.history: dict[str, list[str]] = {}

    def serve(self, request: RecordedRequest) -> Reply:
        path = request.path
        params = self.params(request)
        if path not in ("/esummary.fcgi", "/elink.fcgi", "/einfo.fcgi", "/epost.fcgi") and not (
            path == "/esearch.fcgi" and params.get("term", "").strip() in self.recorded
        ):
            return super().serve(request)
        refused = self.admit(params)
        if refused is not None:
            return refused
        if path == "/esearch.fcgi":
            return self._recorded_search(params)
        if path == "/esummary.fcgi":
            return self._esummary(request.method, params)
        if path == "/elink.fcgi":
            return self._elink(params)
        if path == "/einfo.fcgi":
            return self._einfo(params)
        return self._epost(params)

    def _recorded_search(self, params: dict[str, str]) -> Reply:
        exchange = self.recorded[params["term"].strip()]
        ids = _ids_for(params["term"].strip(), exchange["count"])[: int(params.get("retmax", "20") or 0)]
        result = {
            "count": str(exchange["count"]),
            "retmax": str(len(ids)),
            "retstart": "0",
            "idlist": ids,
            "translationset": [],
            "querytranslation": exchange["translation"],
        }
        return _json(200, {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result})

    def _esummary(self, method: str, params: dict[str, str]) -> Reply:
        if params.get("db") != "pubmed":
            return _json(
                200,
                {
                    "header": {"type": "esummary", "version": "0.3"},
                    "error": f"Invalid db name specified: {params.get('db', '')}",
                },
            )
        if "WebEnv" in params:
            posted = self.history.get(f"{params['WebEnv']}#{params.get('query_key', '')}")
            if posted is None:
                return _json(
                    200,
                    {
                        "header": {"type": "esummary", "version": "0.3"},
                        "error": "Unable to obtain query #" + params.get("query_key", ""),
                    },
                )
            start, size = int(params.get("retstart", "0")), int(params.get("retmax", "20"))
            ids = posted[start : start + size]
        else:
            ids = [uid.strip() for uid in params.get("id", "").split(",") if uid.strip()]
            if method == "GET" and len(ids) > GET_ID_LIMIT:
                return Reply(
                    414, b"<html><body><h1>Request-URI Too Long</h1></body></html>", {"Content-Type": "text/html"}
                )
        if not ids:
            return _json(
                200, {"header": {"type": "esummary", "version": "0.3"}, "error": "Empty id list - nothing todo"}
            )
        if len(ids) > ESUMMARY_MAX:
            return _json(
                200,
                {
                    "header": {"type": "esummary", "version": "0.3"},
                    "error": f"Too many UIDs in request: {len(ids)}; at most {ESUMMARY_MAX}",
                },
            )
        result: dict[str, Any] = {"uids": ids}
        for uid in ids:
            result[uid] = self._summary_of(uid) or {"uid": uid, "error": "cannot get document summary"}
        return _json(200, {"header": {"type": "esummary", "version": "0.3"}, "result": result})

    def _summary_of(self, uid: str) -> dict[str, Any] | None:
        if uid in self.summaries:
            return self.summaries[uid]
        paper = self.by_pmid.get(uid)
        return _summary(uid, f"Loss of TP53 drives and sustains tumour growth ({uid}).") if paper else None

    def _elink(self, params: dict[str, str]) -> Reply:
        if not params.get("dbfrom") or not params.get("db"):
            return _json(200, {"ERROR": "dbfrom and db are required"})
        if params["dbfrom"] != "pubmed" or params["db"] != "pubmed":
            return _json(200, {"ERROR": f"Invalid db name specified: {params['dbfrom']} / {params['db']}"})
        ids = [uid.strip() for uid in params.get("id", "").split(",") if uid.strip()]
        linkname = params.get("linkname", "pubmed_pubmed")
        linkset: dict[str, Any] = {"dbfrom": "pubmed", "ids": ids}
        if linkname in LINKNAMES:
            links = [p for uid in ids for p in self.links[linkname].get(uid, [])]
            if links:
                linkset["linksetdbs"] = [{"dbto": "pubmed", "linkname": linkname, "links": links}]
        return _json(200, {"header": {"type": "elink", "version": "0.3"}, "linksets": [linkset]})

    def _einfo(self, params: dict[str, str]) -> Reply:
        if not params.get("db"):
            return _json(
                200,
                {
                    "header": {"type": "einfo", "version": "0.3"},
                    "einforesult": {"dblist": ["pubmed", "pmc", "gene", "mesh"]},
                },
            )
        if params["db"] != "pubmed":
            return _json(
                200,
                {
                    "header": {"type": "einfo", "version": "0.3"},
                    "einforesult": {"ERROR": f"Invalid db name specified: {params['db']}"},
                },
            )
        info = {
            "dbname": "pubmed",
            "menuname": "PubMed",
            "count": "38000000",
            "lastupdate": "2026/12/05 04:03",
            "fieldlist": [
                {"name": name, "fullname": full, "isdate": "Y" if name.endswith("DAT") else "N"}
                for name, full in FIELDS
            ],
            "linklist": [{"name": name, "dbto": "pubmed"} for name in LINKNAMES],
        }
        return _json(200, {"header": {"type": "einfo", "version": "0.3"}, "einforesult": {"dbinfo": [info]}})

    def _epost(self, params: dict[str, str]) -> Reply:
        if params.get("db") != "pubmed":
            return Reply(
                200,
                f"<ePostResult><ERROR>Invalid db name specified: {params.get('db', '')}</ERROR></ePostResult>".encode(),
                {"Content-Type": XML},
            )
        raw = [uid.strip() for uid in params.get("id", "").split(",") if uid.strip()]
        valid, invalid = [u for u in raw if u.isdigit()], [u for u in raw if not u.isdigit()]
        webenv = f"MCID_{len(self.history) + 1:04d}"
        self.history[f"{webenv}#1"] = valid
        bad = "".join(f"<Id>{u}</Id>" for u in invalid)
        body = (
            '<?xml version="1.0" encoding="UTF-8" ?>\n<ePostResult>\n'
            + (f"\t<InvalidIdList>{bad}</InvalidIdList>\n" if bad else "")
            + f"\t<QueryKey>1</QueryKey>\n\t<WebEnv>{webenv}</WebEnv>\n</ePostResult>\n"
        )
        return Reply(200, body.encode(), {"Content-Type": XML})

    def article_xml(self, uid: str) -> str | None:
        """EFetch records for the summaries this server holds too (their MeSH is what an answer shows)."""
        if uid in self.summaries:
            xml = pubmed_article(
                uid, "<Year>2025</Year><Month>Mar</Month>", self.summaries[uid]["title"], f"10.5555/flux.{uid}"
            )
            topic = self.topics.get(uid)
            if topic:  # an abstract about what the search asked for, in the structured form PubMed gives
                abstract = (
                    f'<Abstract><AbstractText Label="BACKGROUND">Little is known about {topic}.</AbstractText>'
                    f'<AbstractText Label="RESULTS">In 412 patients, {topic} was common and lasted a median '
                    f"of 9 months.</AbstractText></Abstract>"
                )
                xml = re.sub(r"<Abstract>.*?</Abstract>", abstract, xml, flags=re.S)
            return xml
        return super().article_xml(uid)


def _summary(pmid: str, title: str) -> dict[str, Any]:
    return {
        "uid": pmid,
        "pubdate": "2025 Mar",
        "epubdate": "",
        "source": "Nat Commun",
        "authors": [
            {"name": "Rivera M", "authtype": "Author"},
            {"name": "Okafor A", "authtype": "Author"},
            {"name": "Lindqvist E", "authtype": "Author"},
            {"name": "Chen Y", "authtype": "Author"},
        ],
        "title": title,
        "pubtype": ["Journal Article"],
        "fulljournalname": "Nature communications",
        "articleids": [{"idtype": "pubmed", "value": pmid}],
        "sortpubdate": "2025/03/01 00:00",
    }
