"""ContentService reaction details (`reaction_details.json`) → reaction participants and the order between reactions,
with the conventions of the BioPAX and SBML readers.

The file is a JSON array of `POST /data/query/ids` answers, in the order the client asked (reactome/content-service
`QueryObjectController.findByIds`: each returned object has "all its properties and direct relationships
(relationships of depth 1) filled"; an object reached only through a relationship carries its properties alone).
The client walks the graph from the reactions outwards, so every object whose relationships Flux needs is returned by
one of the answers. What Flux reads (reactome/graph-core `domain.model`):
- `ReactionLikeEvent`: `input` and `output` (a PhysicalEntity listed once per unit of stoichiometry),
  `catalystActivity` (→ `CatalystActivity.physicalEntity`), `regulatedBy` (→ `Regulation.regulator`; a
  PositiveRegulation or one of its subclasses, Requirement and PositiveGeneExpressionRegulation, is positive; a
  NegativeRegulation or NegativeGeneExpressionRegulation negative) and `precedingEvent`;
- a PhysicalEntity's `referenceEntity`: a ReferenceGeneProduct (or its subclass ReferenceIsoform, whose `identifier`
  is the parent accession) with `databaseName` UniProt, or a ReferenceMolecule with `databaseName` ChEBI;
- `Complex.hasComponent`, `EntitySet.hasMember` and `CandidateSet.hasCandidate`, flattened to the UniProt and ChEBI
  ids inside, however deep (a Polymer's repeated unit is not followed, as Reactome's BioPAX exporter does not).
Each answer is one Jackson serialisation (`@JsonIdentityInfo` on `DatabaseObject`, see content_json.py): a bare
integer inside it names an object written earlier in that same answer. Objects of different answers are joined by
dbId, the returned (loaded) object winning over a depth-1 copy.

Conventions shared with biopax.py: a gene is its UniProt accession (isoform suffix dropped), a compound `CHEBI:<n>`,
a complex or set its stable id with the flattened component ids; an EntitySet all of whose members and candidates are
Complexes is a complex, as Reactome's BioPAX exporter (`org.reactome.biopax.ReactomeToBioPAX3XMLConverter`,
`getReactomeEntityType`) writes it; a participant's name is the shortest of its names, the exporter's displayName.
A participant with no UniProt or ChEBI reference, a reference that names no object of its answer, a body of the wrong
shape and an object no answer returned are quarantined with their reason; the rest parses. A reaction's
`precedingEvent` P gives the step P → reaction when both are reactions of the pull.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from dagster_project.sources.ids import REACTOME_HUMAN, chebi_id, strip_html, uniprot_base
from dagster_project.sources.model import (
    EntityKind,
    ParseResult,
    ParticipantRole,
    Quarantined,
    ReactionParticipantRecord,
    ReactionStepRecord,
)
from dagster_project.sources.reactome.content_json import (
    PATHWAY_CLASSES,
    REACTION_CLASSES,
    Dangling,
    Identity,
    json_kind,
    read_json,
)

SOURCE = "reactome"
POSITIVE = frozenset({"PositiveRegulation", "Requirement", "PositiveGeneExpressionRegulation"})
NEGATIVE = frozenset({"NegativeRegulation", "NegativeGeneExpressionRegulation"})
SETS = frozenset({"DefinedSet", "CandidateSet", "OpenSet", "EntitySet"})
PARTS = ("hasComponent", "hasMember", "hasCandidate")
MAX_DEPTH = 8  # complexes and sets nest a few levels; a cycle stops here
T = TypeVar("T")


@dataclass(frozen=True)
class _Node:
    """One object as an answer wrote it, with that answer's identity (its bare dbIds resolve there)."""

    obj: dict[str, Any]
    identity: Identity
    loaded: bool  # returned by an answer, so its relationships are filled

    @property
    def db_id(self) -> int:
        return int(self.obj["dbId"])

    @property
    def schema_class(self) -> str:
        value = self.obj.get("schemaClass")
        return value if isinstance(value, str) else ""


Role = tuple[ParticipantRole, "_Node | Dangling"]


class _Bad(Exception):
    """Why one participant cannot be read; it is quarantined and the reaction's other participants kept."""


class _Graph:
    """The loaded objects of all answers by dbId, and reading their relationships."""

    def __init__(self) -> None:
        self.loaded: dict[int, _Node] = {}

    def add(self, obj: dict[str, Any], identity: Identity) -> None:
        self.loaded.setdefault(int(obj["dbId"]), _Node(obj, identity, True))

    def follow(self, node: _Node, field: str) -> list[_Node | Dangling]:
        """The objects a relationship names (one or a list), each as loaded when an answer returned it."""
        value = node.obj.get(field)
        values = value if isinstance(value, list) else [] if value is None else [value]
        out: list[_Node | Dangling] = []
        for item in map(node.identity.resolve, values):
            if isinstance(item, Dangling):
                out.append(item)
            elif isinstance(item, dict) and _has_db_id(item):
                out.append(self.loaded.get(int(item["dbId"])) or _Node(item, node.identity, False))
            else:
                raise _Bad(f"{field} holds a JSON {json_kind(item)}, not an object or a dbId")
        return out


def _has_db_id(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("dbId"), int) and not isinstance(obj.get("dbId"), bool)


def _bad(raw_ref: str, key: str, reason: str, payload: object) -> Quarantined:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return Quarantined(SOURCE, key, raw_ref, reason, text[:2000])


def parse_reaction_details(data: bytes, raw_ref: str, reactions: Collection[str] | None = None) -> ParseResult:
    """Participants and steps of the reactions in the answers (of `reactions` only, when given: the reactions the
    pull's containedEvents listed, which also bound the steps). A reaction of `reactions` that no answer returned is
    quarantined: its participants are unknown."""
    result = ParseResult()
    body, reason = read_json(data, list, "an array of /data/query/ids answers")
    if reason is not None:
        result.quarantined.append(
            _bad(raw_ref, raw_ref.rsplit("/", 1)[-1], reason, data[:2000].decode("utf-8", errors="replace"))
        )
        return result
    graph = _Graph()
    for n, answer in enumerate(body):
        _read_answer(graph, n, answer, raw_ref, result)
    wanted = set(reactions) if reactions is not None else None
    events = {}
    for node in graph.loaded.values():
        st_id = node.obj.get("stId")
        if node.schema_class in REACTION_CLASSES and isinstance(st_id, str) and (wanted is None or st_id in wanted):
            events.setdefault(st_id, node)
    kept = set(events) if wanted is None else wanted
    for st_id, node in events.items():
        _participants(graph, st_id, node, raw_ref, result)
        _steps(graph, st_id, node, kept, raw_ref, result)
    for st_id in sorted((wanted or set()) - set(events)):
        result.quarantined.append(
            _bad(
                raw_ref,
                st_id,
                f"no /data/query/ids answer returned reaction {st_id}: its participants and order are unknown",
                st_id,
            )
        )
    result.participants = list(dict.fromkeys(result.participants))
    result.steps = list(dict.fromkeys(result.steps))
    result.quarantined = list(dict.fromkeys(result.quarantined))
    return result


def reaction_summations(data: bytes) -> dict[str, str]:
    """Each returned reaction's summation text (`Event.summation` → `Summation.text`, HTML stripped), by stable id;
    what cannot be read is left out here (parse_reaction_details quarantines it)."""
    body, reason = read_json(data, list, "an array of /data/query/ids answers")
    if reason is not None:
        return {}
    graph = _Graph()
    for n, answer in enumerate(body):
        _read_answer(graph, n, answer, "", ParseResult())
    out: dict[str, str] = {}
    for node in graph.loaded.values():
        st_id = node.obj.get("stId")
        if node.schema_class not in REACTION_CLASSES or not isinstance(st_id, str):
            continue
        try:
            texts = [s.obj.get("text") for s in graph.follow(node, "summation") if isinstance(s, _Node)]
        except _Bad:
            continue
        text = " ".join(strip_html(t) for t in texts if isinstance(t, str) and t.strip())
        if text:
            out[st_id] = text
    return out


def _read_answer(graph: _Graph, n: int, answer: object, raw_ref: str, result: ParseResult) -> None:
    if not isinstance(answer, list):
        result.quarantined.append(
            _bad(
                raw_ref,
                f"answer:{n}",
                f"answer {n} is a JSON {json_kind(answer)}, not the array /data/query/ids returns",
                answer,
            )
        )
        return
    identity = Identity()
    for k, element in enumerate(answer):
        identity.register(element)
        obj = identity.resolve(element)
        if isinstance(obj, Dangling):
            result.quarantined.append(_bad(raw_ref, f"answer:{n}:{k}", obj.reason, element))
        elif not isinstance(obj, dict) or not _has_db_id(obj):
            result.quarantined.append(
                _bad(raw_ref, f"answer:{n}:{k}", "answer element is not an object with a dbId", element)
            )
        else:
            graph.add(obj, identity)


def _participants(graph: _Graph, reaction_id: str, node: _Node, raw_ref: str, result: ParseResult) -> None:
    def read(link: Callable[[], list[T]]) -> list[T]:
        # A relationship, catalyst activity or regulation that cannot be read is a row; the others still read.
        try:
            return link()
        except _Bad as exc:
            result.quarantined.append(_bad(raw_ref, reaction_id, f"reaction {reaction_id}: {exc}", node.obj))
            return []

    roles: list[Role] = [("input", e) for e in read(lambda: graph.follow(node, "input"))]
    roles += [("output", e) for e in read(lambda: graph.follow(node, "output"))]
    for activity in read(lambda: graph.follow(node, "catalystActivity")):
        catalysts = read(partial(_through, graph, activity, "physicalEntity", "catalyst activity"))
        roles += [("catalyst", e) for e in catalysts]
    for regulation in read(lambda: graph.follow(node, "regulatedBy")):
        roles += read(partial(_regulators, graph, regulation))
    for role, entity in roles:
        try:
            result.participants.append(_participant(graph, reaction_id, role, entity))
        except _Bad as exc:
            named = _name(entity.obj) if isinstance(entity, _Node) else f"dbId:{entity.db_id}"
            payload = entity.obj if isinstance(entity, _Node) else entity.db_id
            result.quarantined.append(
                _bad(raw_ref, f"{reaction_id}|{named}", f"{role} of {reaction_id}: {exc}", payload)
            )


def _through(graph: _Graph, link: _Node | Dangling, field: str, what: str) -> list[_Node | Dangling]:
    """A CatalystActivity's physicalEntity or a Regulation's regulator (which must have been returned)."""
    if isinstance(link, Dangling):
        raise _Bad(f"{what} {link.reason}")
    if not link.loaded:
        raise _Bad(f"{what} dbId {link.db_id} was returned by no /data/query/ids answer, so its {field} is unknown")
    targets = graph.follow(link, field)
    for target in targets:
        if isinstance(target, _Node) and target.schema_class in REACTION_CLASSES | PATHWAY_CLASSES:
            raise _Bad(f"{what} dbId {link.db_id} names an event ({target.obj.get('stId')}), not a physical entity")
    return targets


def _regulators(graph: _Graph, regulation: _Node | Dangling) -> list[Role]:
    """A Regulation's regulator in its role: positive or negative by the regulation's class."""
    if isinstance(regulation, Dangling):
        raise _Bad(f"regulation {regulation.reason}")
    if regulation.schema_class in POSITIVE:
        role: ParticipantRole = "positive_regulator"
    elif regulation.schema_class in NEGATIVE:
        role = "negative_regulator"
    else:
        raise _Bad(f"regulation dbId {regulation.db_id} has unknown schemaClass {regulation.schema_class!r}")
    return [(role, e) for e in _through(graph, regulation, "regulator", "regulation")]


def _participant(
    graph: _Graph, reaction_id: str, role: ParticipantRole, entity: _Node | Dangling
) -> ReactionParticipantRecord:
    if isinstance(entity, Dangling):
        raise _Bad(f"physical entity {entity.reason}")
    name = _name(entity.obj)
    own = _own_id(graph, entity)
    if own is not None:
        kind: EntityKind = "gene" if own.startswith("UNIPROT:") else "compound"
        return ReactionParticipantRecord(reaction_id, role, kind, own.removeprefix("UNIPROT:"), name)
    components = tuple(dict.fromkeys(c.removeprefix("UNIPROT:") for c in _component_ids(graph, entity, 0)))
    if not components:
        raise _Bad(f"participant {name!r} has no UniProt or ChEBI reference")
    st_id = entity.obj.get("stId")
    entity_id = st_id if isinstance(st_id, str) and st_id else f"dbId:{entity.db_id}"
    return ReactionParticipantRecord(reaction_id, role, _group_kind(graph, entity), entity_id, name, components)


def _own_id(graph: _Graph, entity: _Node) -> str | None:
    """UNIPROT:<accession> or CHEBI:<n> from the entity's referenceEntity; None when it has none (a complex, a
    set). An entity no answer returned is an error: whether it has a reference is unknown."""
    if not entity.loaded:
        raise _Bad(
            f"physical entity dbId {entity.db_id} ({entity.obj.get('displayName')}) was returned by no "
            "/data/query/ids answer"
        )
    for reference in graph.follow(entity, "referenceEntity"):
        if isinstance(reference, Dangling):
            raise _Bad(f"referenceEntity {reference.reason}")
        database = str(reference.obj.get("databaseName") or "").lower()
        identifier = reference.obj.get("identifier") or reference.obj.get("variantIdentifier")
        if not isinstance(identifier, str) or not identifier:
            continue
        if database == "uniprot":
            return f"UNIPROT:{uniprot_base(identifier)}"
        if database == "chebi" and (chebi := chebi_id(identifier)):
            return chebi
    return None


def _component_ids(graph: _Graph, entity: _Node, depth: int) -> list[str]:
    if depth > MAX_DEPTH:
        return []
    found: list[str] = []
    for field in PARTS:
        for part in graph.follow(entity, field):
            if isinstance(part, Dangling):
                raise _Bad(f"{field} {part.reason}")
            own = _own_id(graph, part)
            found += [own] if own else _component_ids(graph, part, depth + 1)
    return found


def _group_kind(graph: _Graph, entity: _Node) -> EntityKind:
    """A Complex, or an EntitySet whose members and candidates are all Complexes, is a complex; any other group a
    set (the classes Reactome's BioPAX exporter gives them)."""
    if entity.schema_class == "Complex":
        return "complex"
    parts = [p for field in ("hasMember", "hasCandidate") for p in graph.follow(entity, field)]
    complexes = [p for p in parts if isinstance(p, _Node) and p.schema_class == "Complex"]
    return "complex" if entity.schema_class in SETS and parts and len(complexes) == len(parts) else "set"


def _name(obj: dict[str, Any]) -> str:
    """The shortest of the entity's names (what Reactome's BioPAX export shows), else its displayName without the
    compartment."""
    names = [n for n in obj.get("name") or () if isinstance(n, str) and n]
    if names:
        return min(names, key=len)
    display = str(obj.get("displayName") or obj.get("dbId") or "")
    return display.rsplit(" [", 1)[0] if display.endswith("]") else display


def _steps(graph: _Graph, reaction_id: str, node: _Node, kept: set[str], raw_ref: str, result: ParseResult) -> None:
    try:
        preceding = graph.follow(node, "precedingEvent")
    except _Bad as exc:
        result.quarantined.append(_bad(raw_ref, reaction_id, f"reaction {reaction_id}: {exc}", node.obj))
        return
    for event in preceding:
        if isinstance(event, Dangling):
            result.quarantined.append(
                _bad(raw_ref, f"{reaction_id}|precedingEvent", f"precedingEvent {event.reason}", event.db_id)
            )
            continue
        st_id = event.obj.get("stId")
        if isinstance(st_id, str) and REACTOME_HUMAN.match(st_id) and st_id in kept and st_id != reaction_id:
            result.steps.append(ReactionStepRecord(st_id, reaction_id))
