"""KEGG REST as KEGG documents it (https://www.kegg.jp/kegg/rest/keggapi.html), served from recorded bodies.

What it enforces, and where each rule comes from:
- Operations `info`, `list`, `get`, `link`, `conv` only; anything else is a 400 with an empty body (keggapi.html,
  "Error": 400 Bad request for a syntax error, 404 Not found when the database or entry does not exist).
- `get` takes at most 10 entries joined by "+"; KEGG answers the first 10 and silently drops the rest (the R client
  KEGGREST warns of exactly that), so a client that sends more loses entries without an error.
- `list/pathway/hsa` in the format KEGG has used since its 2022 API revision: `hsa00010<TAB>name`, no `path:` prefix
  (the recorded listing predates it and is served as KEGG writes it today). `link` keeps prefixes on both sides:
  `path:hsa00010<TAB>hsa:10327`, and `link/compound/pathway` answers with reference maps (`path:map00010`).
- Every answer is `text/plain; charset=utf-8`.
- KEGG blocks clients that flood it with 403 Forbidden; the documented etiquette is about 3 requests per second,
  enforced here (per client) when `rate_limit` is set.

Payloads: `fixtures/kegg_rest/` (recorded `list`, `get/hsa00010` and `link` answers); listed pathways without a
recorded flat file get one in the same layout from their listing line; compounds come from the recorded flat file's
COMPOUND section, written as reference-map links the way `link/compound/pathway` returns them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.contract_server import ContractServer, RateWindow, RecordedRequest, Reply

TEXT = "text/plain; charset=utf-8"
GET_MAX = 10
# A reference map with no human pathway: `link/compound/pathway` lists it, and no hsa pathway may receive it.
MAP_WITHOUT_HUMAN = ("map00254", ["C06800", "C00083"])
RELEASE = (
    "pathway          KEGG Pathway Database\npath             Release 112.0+/11-30, Nov 24\n"
    "                 Kanehisa Laboratories\n                 568 entries\n"
)


def _text(body: str, status: int = 200) -> Reply:
    return Reply(status, body.encode(), {"Content-Type": TEXT})


class KeggContractServer(ContractServer):
    provider = "KEGG REST"

    def __init__(self, fixtures: Path, conv: Path, *, rate_limit: int | None = None) -> None:
        super().__init__()
        rest = fixtures / "kegg_rest"
        listing = [ln.split("\t") for ln in (rest / "hsa.txt").read_text().splitlines() if ln.strip()]
        self.pathways = {pid.removeprefix("path:"): name for pid, name in listing}
        recorded = (rest / "path_hsa00010.txt").read_text().strip().removesuffix("///").strip()
        self.entries = {pid: self._flat(pid, name) for pid, name in self.pathways.items()}
        self.entries["hsa00010"] = recorded
        self.gene_links = [ln.split("\t") for ln in (rest / "pathway_gene.txt").read_text().splitlines() if ln]
        self.compounds = {"map00010": _section(recorded, "COMPOUND"), MAP_WITHOUT_HUMAN[0]: MAP_WITHOUT_HUMAN[1]}
        self.conv = conv.read_text()
        self.window = RateWindow(rate_limit) if rate_limit else None
        self.get_sizes: list[int] = []  # entries asked for in each `get`

    @staticmethod
    def _flat(pid: str, name: str) -> str:
        return (
            f"ENTRY       {pid}                    Pathway\nNAME        {name}\n"
            f"PATHWAY_MAP {pid}  {name.split(' - ')[0]}\nORGANISM    Homo sapiens (human) [GN:hsa]"
        )

    def serve(self, request: RecordedRequest) -> Reply:
        if self.window and not self.window.admit(request.headers.get("User-Agent", "")):
            return Reply(403, b"", {"Content-Type": "text/html"})
        parts = [p for p in request.path.split("/") if p]
        if request.method != "GET" or not parts:
            return _text("", 400)
        op, args = parts[0], parts[1:]
        handler = {
            "info": self._info,
            "list": self._list,
            "get": self._get,
            "link": self._link,
            "conv": self._conv,
        }.get(op)
        return handler(args) if handler else _text("", 400)

    def _info(self, args: list[str]) -> Reply:
        return _text(RELEASE) if args == ["pathway"] else _text("", 400)

    def _list(self, args: list[str]) -> Reply:
        if args != ["pathway", "hsa"]:
            return _text("", 400)
        return _text("".join(f"{pid}\t{name}\n" for pid, name in self.pathways.items()))

    def _get(self, args: list[str]) -> Reply:
        if len(args) != 1:
            return _text("", 400)
        asked = args[0].split("+")
        self.get_sizes.append(len(asked))
        found = [
            self.entries[e.removeprefix("path:")] for e in asked[:GET_MAX] if e.removeprefix("path:") in self.entries
        ]
        return _text("".join(f"{entry}\n///\n" for entry in found)) if found else _text("", 404)

    def _link(self, args: list[str]) -> Reply:
        if args == ["hsa", "pathway"]:
            return _text("".join(f"{path}\t{gene}\n" for gene, path in self.gene_links))
        if args == ["pathway", "hsa"]:
            return _text("".join(f"{gene}\t{path}\n" for gene, path in self.gene_links))
        if args == ["compound", "pathway"]:
            return _text("".join(f"path:{m}\tcpd:{c}\n" for m, cpds in self.compounds.items() for c in cpds))
        return _text("", 400)

    def _conv(self, args: list[str]) -> Reply:
        return _text(self.conv) if args == ["uniprot", "hsa"] else _text("", 400)


def _section(flat: str, field: str) -> list[str]:
    """The first column of a flat-file section (COMPOUND → C00022, C00024, …)."""
    ids: list[str] = []
    inside = False
    for line in flat.splitlines():
        if line[:12].strip():
            inside = line.startswith(field)
        if inside and (match := re.match(r"\s*(C\d{5})\b", line[12:])):
            ids.append(match.group(1))
    return ids
