"""Reactome's ContentService (/ContentService/data/…) and download area (/download/current/…) as the ContentService's
own source declares them, served from recorded files.

What it enforces, and where each rule comes from (reactome/content-service; reactome/graph-core):
- `QueryObjectController.findByIds`: `POST /data/query/ids` with `consumes = "text/plain"`, `produces =
  "application/json"`. A request whose Content-Type is not text/plain (or that has none) never reaches the
  controller: Spring MVC answers 415 ("Content type '' not supported" when the header is missing). The body is split
  on `,`, `;`, newline or tab and each id trimmed; stable ids and dbIds both work. "Only requests containing up to 20
  ids are processed": past 20 the controller keeps the first 20 (`ids.stream().limit(20)`, duplicates dropped) and
  answers for those alone, with a 200 and no word about the rest, which is what this server does. Known ids are
  answered and unknown ones left out; when none is known the answer is a NotFoundException, 404.
- `PathwaysController.getContainedEvents`: `GET /data/pathway/{id}/containedEvents`, every event the pathway contains
  recursively (sub-pathways and reactions), each once; no event or an unknown id is a 404.
- `GET /data/database/version`: the release number as text/plain.
- Errors (`GlobalExceptionHandler` → `ErrorInfo`): a JSON body `{"code": …, "reason": …, "messages": [...]}` with
  `application/json`. (The stored ErrorInfo versions also carry the request `url` and spell `reason` as the status
  name; Flux reads only the status and the text, so this server writes the reason phrase.) A ContentService path it
  does not know is a 404 in that shape, a GET on /data/query/ids a 405.
- Object identity: graph-core's `DatabaseObject` is annotated `@JsonIdentityInfo(generator =
  ObjectIdGenerators.PropertyGenerator.class, property = "dbId")`, so Jackson writes an object in full the first
  time it occurs in one response and as its bare integer dbId every later time. `_Writer` does the same, for the
  top-level elements and for nested objects (species, summations, `hasEvent`), one response at a time. The objects
  a response returns are loaded with their relationships; one that only a relationship reaches is written with its
  properties alone, as the graph's depth-1 loading leaves it.
- Downloads: `/download/current/<file>.txt` are plain-text files; an unknown file is the web server's HTML 404.
- Reaction details through the same `/data/query/ids` (reactome/graph-core `domain.model`): a
  `ReactionLikeEvent` returns `input` / `output` (a PhysicalEntity once per unit of stoichiometry, as
  `ReactionLikeEvent.getInput` expands `Input.stoichiometry`), `catalystActivity`, `regulatedBy` and `precedingEvent`;
  a `CatalystActivity` its `physicalEntity`; a `PositiveRegulation` / `NegativeRegulation` its `regulator`; an
  `EntityWithAccessionedSequence` or `SimpleEntity` its `referenceEntity` (ReferenceGeneProduct / ReferenceIsoform
  with `databaseName` UniProt, `identifier` the accession and `variantIdentifier` the isoform; ReferenceMolecule with
  `databaseName` ChEBI and the bare ChEBI number); a `Complex` its `hasComponent` (expanded by stoichiometry like
  `Complex.getHasComponent`), a `DefinedSet` its `hasMember`. Any object of the graph answers by stable id or dbId;
  an id the graph lacks is left out, and a call that knows none is the 404 above.
- Depth: a returned object is written with its relationships, every object it reaches with its properties alone
  (the controller's "direct relationships (relationships of depth 1) filled"). A containedEvents answer writes only
  the hierarchy fields of its events (`species`, `summation`, `hasEvent`): Flux reads participants from
  /data/query/ids, never from there.

Payloads: the download files are the recorded `fixtures/reactome_downloads/` files, served verbatim; their human
pathways (names from ReactomePathways.txt, hierarchy from ReactomePathwaysRelation.txt) and the bundled demo's
`summations.json` objects (recorded ContentService shape: dbId, stId, displayName, speciesName, schemaClass,
className, summation) make up the pathways /data/query/ids knows. The summation texts of the four CD28 pathways and
the reactions they contain are synthetic (no recorded containedEvents answer exists), in the same object shape: the
two CD28 signalling branches share one Summation object, a phosphorylation step belongs to both branches, and the
events cover every ReactionLikeEvent class the releases use (Reaction, BlackBoxEvent, Polymerisation,
Depolymerisation, FailedReaction).

The reaction details are the bundled demo's `reaction_details.json` (/data/query/ids answers in the form the live
client stores them) and its `reactions.json` (Glycolysis' containedEvents answer, which names the pathway of each
reaction). No ContentService answer was recorded: their facts are those of Reactome's BioPAX export of Glycolysis
(release 84) for the reactions the pathway lists itself (participants, catalysts, regulators, preceding events, the
make-up of complexes and sets, UniProt and ChEBI references), put in the graph-core object shape (see the demo's
README). They are read at start, their back-references resolved per answer, and served again through `_Writer`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.contract_server import ContractServer, RecordedRequest, Reply

CONTENT = "/ContentService/data/"
DOWNLOADS = "/download/current/"
QUERY_IDS = CONTENT + "query/ids"
MAX_IDS = 20
RELEASE = "94"
HUMAN = "Homo sapiens"
SPECIES = {"dbId": 48887, "displayName": HUMAN, "taxId": "9606", "schemaClass": "Species", "className": "Species"}
# Relationship fields, written only for the objects a response returns; containedEvents writes the hierarchy alone.
HIERARCHY = ("species", "summation", "hasEvent")
RELATIONSHIPS = (
    *HIERARCHY,
    "input",
    "output",
    "catalystActivity",
    "regulatedBy",
    "precedingEvent",
    "physicalEntity",
    "regulator",
    "referenceEntity",
    "hasComponent",
    "hasMember",
    "hasCandidate",
)
REACTION_CLASSES = (
    "Reaction",
    "BlackBoxEvent",
    "Polymerisation",
    "Depolymerisation",
    "FailedReaction",
    "CellDevelopmentStep",
)
REASONS = {404: "Not Found", 405: "Method Not Allowed", 415: "Unsupported Media Type"}

# The CD28 pathways of the recorded downloads: their synthetic summations (one shared by both signalling branches)
# and their own events (stId, name, schemaClass); sub-pathways come from ReactomePathwaysRelation.txt.
SHARED = (
    "<p>Phosphorylated CD28 recruits PI3K, whose product PIP3 activates AKT, and VAV1, which drives actin "
    "reorganisation at the immune synapse.</p>"
)
SUMMATIONS = {
    "R-HSA-388841": "Members of the CD28 family (CD28, CTLA4, ICOS, PD-1, BTLA) co-stimulate or inhibit T cells "
    "after binding B7-family ligands.",
    "R-HSA-389356": "<p>CD28 on naive T cells binds CD80 and CD86 on antigen-presenting cells and supplies the second "
    "signal T-cell activation needs.</p>",
    "R-HSA-389357": SHARED,
    "R-HSA-389359": SHARED,
}
PHOSPHORYLATION = ("R-HSA-9990101", "CD28 is phosphorylated by LCK", "Reaction")
EVENTS: dict[str, list[tuple[str, str, str]]] = {
    "R-HSA-389357": [
        PHOSPHORYLATION,
        ("R-HSA-389348", "CD28 binds PI3K", "Reaction"),
        ("R-HSA-9990102", "AKT is activated by mTORC2", "BlackBoxEvent"),
        ("R-HSA-9990103", "CD28 Y191F does not bind PI3K", "FailedReaction"),
    ],
    "R-HSA-389359": [
        PHOSPHORYLATION,
        ("R-HSA-9990104", "CD28 binds VAV1", "Reaction"),
        ("R-HSA-9990105", "Actin polymerises at the immune synapse", "Polymerisation"),
        ("R-HSA-9990106", "Actin filaments depolymerise", "Depolymerisation"),
    ],
    "R-HSA-389356": [("R-HSA-9990107", "CD28 homodimer binds CD80", "Reaction")],
}
SUMMATION_DB_IDS = 90_000_000  # the recorded summation objects carry no dbId; these are this server's


def _json(status: int, body: Any) -> Reply:
    return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json"})


def _error(status: int, *messages: str) -> Reply:
    return _json(status, {"code": status, "reason": REASONS[status], "messages": list(messages)})


def _class_name(schema_class: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r" \1", schema_class)


class _Writer:
    """One response's Jackson serialisation: the first occurrence of a dbId in full, every later one as the bare
    integer; the `relationships` fields only for the objects in `loaded` (what the response returns)."""

    def __init__(self, loaded: set[int], relationships: tuple[str, ...] = RELATIONSHIPS) -> None:
        self.loaded = loaded
        self.relationships = relationships
        self.written: set[int] = set()

    def write(self, node: dict[str, Any]) -> dict[str, Any] | int:
        db_id = node["dbId"]
        if db_id in self.written:
            return db_id
        self.written.add(db_id)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key not in RELATIONSHIPS:
                out[key] = value
            elif key in self.relationships and db_id in self.loaded:
                out[key] = [self.write(v) for v in value] if isinstance(value, list) else self.write(value)
        return out


def _written(answer: Any) -> dict[int, dict[str, Any]]:
    """The objects one answer writes in full, by dbId (what its bare dbIds name)."""
    written: dict[int, dict[str, Any]] = {}
    stack: list[Any] = [answer]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("dbId"), int):
                written.setdefault(node["dbId"], node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return written


def _recorded_objects(answers: list[Any]) -> dict[int, dict[str, Any]]:
    """Recorded /data/query/ids answers → every object by dbId: a returned one with its relationships as the shared
    objects they name (resolved within its own answer), any other with its properties."""
    objects: dict[int, dict[str, Any]] = {}
    returned: list[tuple[dict[str, Any], dict[int, dict[str, Any]]]] = []
    for answer in answers:
        written = _written(answer)
        for db_id, node in written.items():
            objects.setdefault(db_id, {k: v for k, v in node.items() if k not in RELATIONSHIPS})
        returned += [(written[e] if isinstance(e, int) else e, written) for e in answer]
    for obj, written in returned:
        for key in [k for k in obj if k in RELATIONSHIPS]:
            value = obj[key]
            shared = [
                objects[(written[v] if isinstance(v, int) else v)["dbId"]]
                for v in (value if isinstance(value, list) else [value])
            ]
            objects[obj["dbId"]][key] = shared if isinstance(value, list) else shared[0]
    return objects


class ReactomeContractServer(ContractServer):
    provider = "Reactome ContentService"

    def __init__(
        self, downloads: Path, summations: Path, *, release: str = RELEASE, details: Path | None = None
    ) -> None:
        """`details`: the folder with the recorded reaction_details.json and reactions.json (by default the one that
        holds `summations`; none there, no reaction details)."""
        super().__init__()
        self.release = release
        self.files = {p.name: p.read_bytes() for p in sorted(downloads.glob("*.txt"))}
        self.pathways: dict[str, dict[str, Any]] = {}  # stId → object, relationships as objects
        self.events: dict[str, dict[str, Any]] = {}  # reaction stId → object
        self.objects: dict[int, dict[str, Any]] = {}  # the reaction details' objects by dbId
        self.query_sizes: list[int] = []  # ids each answered /data/query/ids call asked for, as sent
        self._summations: dict[str, dict[str, Any]] = {}  # text → the one Summation object holding it
        for recorded in json.loads(summations.read_text(encoding="utf-8")):
            texts = [s["text"] for s in recorded["summation"]]
            self._pathway(recorded["stId"], recorded["displayName"], recorded["dbId"], texts)
        names = [ln.split("\t") for ln in self.files["ReactomePathways.txt"].decode().splitlines() if ln.strip()]
        for st_id, name, species in names:
            if species == HUMAN and st_id not in self.pathways:
                self._pathway(st_id, name, int(st_id.rsplit("-", 1)[1]), [SUMMATIONS[st_id]])
        for line in self.files["ReactomePathwaysRelation.txt"].decode().splitlines():
            parent, child = line.split("\t")
            if parent in self.pathways and child in self.pathways:
                self.pathways[parent]["hasEvent"].append(self.pathways[child])
        for pathway_id, events in EVENTS.items():
            for st_id, name, schema_class in events:
                if pathway_id in self.pathways:
                    self.add_event(pathway_id, st_id, name, schema_class)
        self._details(details or summations.parent)

    def _details(self, folder: Path) -> None:
        """The recorded reaction details, each reaction placed in the pathway whose recorded containedEvents lists
        it."""
        if not (folder / "reaction_details.json").is_file():
            return
        self.objects = _recorded_objects(json.loads((folder / "reaction_details.json").read_text("utf-8")))
        taken = {p["dbId"]: p["stId"] for p in self.pathways.values()}
        clashes = [i for i, o in self.objects.items() if i in taken and taken[i] != o.get("stId")]
        if clashes:
            raise ValueError(f"reaction detail dbIds {clashes} are pathways' dbIds")
        by_st_id = {o["stId"]: o for o in self.objects.values() if o.get("stId")}
        recorded = folder / "reactions.json"
        for pathway_id, answer in (json.loads(recorded.read_text("utf-8")) if recorded.is_file() else {}).items():
            written = _written(answer)
            for element in answer:
                event = written[element] if isinstance(element, int) else element
                reaction = by_st_id.get(event.get("stId", ""))
                if pathway_id in self.pathways and reaction and reaction["schemaClass"] in REACTION_CLASSES:
                    self.pathways[pathway_id]["hasEvent"].append(reaction)

    def _pathway(self, st_id: str, name: str, db_id: int, texts: list[str]) -> None:
        summations = []
        for text in texts:
            if text not in self._summations:
                self._summations[text] = {
                    "dbId": SUMMATION_DB_IDS + len(self._summations),
                    "displayName": text[:60],
                    "text": text,
                    "schemaClass": "Summation",
                    "className": "Summation",
                }
            summations.append(self._summations[text])
        self.pathways[st_id] = {
            "dbId": db_id,
            "stId": st_id,
            "displayName": name,
            "speciesName": HUMAN,
            "schemaClass": "Pathway",
            "className": "Pathway",
            "species": [SPECIES],
            "summation": summations,
            "hasEvent": [],
        }

    def add_event(self, pathway_id: str, st_id: str, name: str, schema_class: str) -> None:
        """Add an event (any schemaClass) to a pathway's `hasEvent`, sharing the object when it is already known."""
        if st_id not in self.events:
            self.events[st_id] = {
                "dbId": int(st_id.rsplit("-", 1)[1]),
                "stId": st_id,
                "displayName": name,
                "speciesName": HUMAN,
                "schemaClass": schema_class,
                "className": _class_name(schema_class),
                "species": [SPECIES],
            }
        self.pathways[pathway_id]["hasEvent"].append(self.events[st_id])

    def contained(self, pathway_id: str) -> list[dict[str, Any]]:
        """Every event under the pathway, recursively, each once, in depth-first order."""
        seen: dict[int, dict[str, Any]] = {}
        stack = list(reversed(self.pathways[pathway_id]["hasEvent"]))
        while stack:
            event = stack.pop()
            if event["dbId"] not in seen:
                seen[event["dbId"]] = event
                stack.extend(reversed(event.get("hasEvent", [])))
        return list(seen.values())

    @staticmethod
    def respond(
        objects: list[dict[str, Any]], relationships: tuple[str, ...] = RELATIONSHIPS
    ) -> list[dict[str, Any] | int]:
        """A response body returning `objects`, written as Jackson writes it."""
        writer = _Writer({o["dbId"] for o in objects}, relationships)
        return [writer.write(o) for o in objects]

    def find(self, key: str) -> dict[str, Any] | None:
        """The object a stable id or a dbId names: a pathway, an event or a reaction-details object."""
        known = [*self.pathways.values(), *self.events.values(), *self.objects.values()]
        return next((o for o in known if o.get("stId") == key or str(o["dbId"]) == key), None)

    # --- answering ----------------------------------------------------------------------------------------------
    def serve(self, request: RecordedRequest) -> Reply:
        if request.path.startswith(DOWNLOADS):
            return self._download(request)
        if request.path == QUERY_IDS:
            if request.method != "POST":
                return _error(405, f"Request method '{request.method}' not supported")
            return self._query_ids(request)
        if request.method == "GET" and request.path == CONTENT + "database/version":
            return Reply.ok(self.release)
        events = re.fullmatch(re.escape(CONTENT) + r"pathway/([^/]+)/containedEvents", request.path)
        if request.method == "GET" and events:
            return self._contained_events(events.group(1))
        return _error(404, f"No endpoint {request.method} {request.path}")

    def _download(self, request: RecordedRequest) -> Reply:
        name = request.path.removeprefix(DOWNLOADS)
        if request.method != "GET" or name not in self.files:
            return Reply(404, b"<html><body><h1>Not Found</h1></body></html>", {"Content-Type": "text/html"})
        return Reply.ok(self.files[name])

    def _query_ids(self, request: RecordedRequest) -> Reply:
        content_type = next((v for k, v in request.headers.items() if k.lower() == "content-type"), "")
        if content_type.split(";")[0].strip().lower() != "text/plain":
            return _error(415, f"Content type '{content_type}' not supported")
        asked = [i.strip() for i in re.split(r",|;|\n|\t", request.body.decode("utf-8", errors="replace"))]
        self.query_sizes.append(len(asked))
        ids = list(dict.fromkeys(asked[:MAX_IDS]))
        found = [p for i in ids if (p := self.find(i))]
        if not found:
            return _error(404, f"Ids: [{', '.join(ids)}] have not been found in the System")
        return _json(200, self.respond(list({p["dbId"]: p for p in found}.values())))

    def _contained_events(self, pathway_id: str) -> Reply:
        events = self.contained(pathway_id) if pathway_id in self.pathways else []
        if not events:
            return _error(404, f"No contained events found in the given event: {pathway_id}")
        return _json(200, self.respond(events, HIERARCHY))
