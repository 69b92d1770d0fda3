"""Reactome's BioPAX level 3 export of a pathway → reactions, their participants and their order, read with pybiopax.

What Flux takes from the object model:
- a reaction is a BiochemicalReaction (or any other Conversion) named by its `Reactome:R-HSA-…` cross-reference,
  contained by the Pathway whose `pathwayComponent` lists it;
- `left` / `right` are its inputs / outputs (swapped when `conversionDirection` is RIGHT_TO_LEFT);
- a Catalysis that controls it names a catalyst; any other Control is a positive (ACTIVATION…) or negative
  (INHIBITION…) regulator;
- a PathwayStep's `stepProcess` reactions precede those of its `nextStep`s;
- the first `comment` that is not an edit note is the reaction's summation.
A participant without a UniProt or ChEBI cross-reference (nor components that have one) is quarantined with its
reason and the reaction kept; a reaction of another species is quarantined whole.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pybiopax
from pybiopax import biopax as bp
from pybiopax.biopax import model as biopax_model

from dagster_project.sources.ids import REACTOME_HUMAN, chebi_id, uniprot_base
from dagster_project.sources.model import (
    EntityKind,
    ParseResult,
    ParticipantRole,
    Quarantined,
    ReactionParticipantRecord,
    ReactionRecord,
    ReactionStepRecord,
)

SOURCE = "reactome"
# pybiopax draws a progress bar per file through this documented setting; Dagster's log is the place for progress.
biopax_model.PYBIOPAX_TQDM_CONFIG["disable"] = True
_EDIT_NOTE = ("Edited:", "Authored:", "Reviewed:", "Converted from EntitySet", "Reactome DB_ID")


def parse_biopax(data: bytes, raw_ref: str) -> ParseResult:
    model = _read(data)
    result = ParseResult()
    parents = _direct_parents(model.objects.values())
    for item in model.objects.values():
        if isinstance(item, bp.Conversion):
            _reaction(item, parents, raw_ref, result)
    kept = {r.id for r in result.reactions}
    result.steps = [s for s in _steps(model.objects.values()) if s.preceding_id in kept and s.following_id in kept]
    return result


def _read(data: bytes) -> Any:
    # pybiopax reads a file or a string; a file keeps its XML base handling as for a download on disk.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.owl"
        path.write_bytes(data)
        return pybiopax.model_from_owl_file(str(path))


def reactome_id(entity: Any) -> str:
    """The stable id in an entity's `Reactome` cross-reference ('' when it has none)."""
    for xref in entity.xref or ():
        if (xref.db or "").lower() == "reactome" and (xref.id or "").startswith("R-"):
            return str(xref.id)
    return ""


def _direct_parents(objects: Iterable[Any]) -> dict[str, str]:
    """A reaction's uid → the stable id of the pathway whose components list it."""
    parents: dict[str, str] = {}
    for pathway in objects:
        if isinstance(pathway, bp.Pathway):
            for component in pathway.pathway_component or ():
                parents.setdefault(component.uid, reactome_id(pathway))
    return parents


def _reaction(conversion: Any, parents: dict[str, str], raw_ref: str, result: ParseResult) -> None:
    reaction_id = reactome_id(conversion)
    where = f"{raw_ref}#{conversion.uid}"
    if not REACTOME_HUMAN.match(reaction_id):
        why = f"reaction {reaction_id} is not human (R-HSA-)" if reaction_id else "reaction without a Reactome id"
        result.quarantined.append(
            Quarantined(SOURCE, reaction_id or conversion.uid, where, why, str(conversion.display_name or ""))
        )
        return
    result.reactions.append(
        ReactionRecord(
            reaction_id,
            str(conversion.display_name or reaction_id),
            parents.get(conversion.uid, ""),
            _summation(conversion.comment),
        )
    )
    inputs, outputs = conversion.left or (), conversion.right or ()
    if str(conversion.conversion_direction or "").upper() == "RIGHT_TO_LEFT":
        inputs, outputs = outputs, inputs
    roles: list[tuple[ParticipantRole, Any]] = [("input", e) for e in inputs] + [("output", e) for e in outputs]
    for control in conversion.controlled_of or ():
        role = _control_role(control)
        roles += [(role, e) for e in control.controller or () if role is not None]
    for role, entity in roles:
        participant = _participant(reaction_id, role, entity, where)
        (result.quarantined if isinstance(participant, Quarantined) else result.participants).append(participant)


def _control_role(control: Any) -> ParticipantRole | None:
    if isinstance(control, bp.Catalysis):
        return "catalyst"
    kind = str(control.control_type or "").upper()
    if kind.startswith("ACTIVATION"):
        return "positive_regulator"
    if kind.startswith("INHIBITION"):
        return "negative_regulator"
    return None


def _participant(
    reaction_id: str, role: ParticipantRole, entity: Any, where: str
) -> ReactionParticipantRecord | Quarantined:
    name = str(entity.display_name or entity.uid)
    own = _own_id(entity)
    if own is not None:
        kind: EntityKind = "gene" if own.startswith("UNIPROT:") else "compound"
        return ReactionParticipantRecord(reaction_id, role, kind, own.removeprefix("UNIPROT:"), name)
    components = tuple(dict.fromkeys(c.removeprefix("UNIPROT:") for c in _component_ids(entity)))
    if not components:
        return Quarantined(
            SOURCE,
            f"{reaction_id}|{name}",
            where,
            f"participant {name!r} ({role}) of {reaction_id} has no UniProt or ChEBI cross-reference",
            json.dumps({"uid": entity.uid})[:2000],
        )
    kind = "complex" if isinstance(entity, bp.Complex) else "set"
    return ReactionParticipantRecord(reaction_id, role, kind, reactome_id(entity) or entity.uid, name, components)


# An isoform's protein is cross-referenced to "UniProt Isoform" (P14618-2): its gene is the base accession's.
UNIPROT_DBS = frozenset({"uniprot", "uniprot isoform"})


def _own_id(entity: Any) -> str | None:
    """UNIPROT:<accession> for a protein, CHEBI:<n> for a small molecule, from its entity reference's xrefs."""
    reference = getattr(entity, "entity_reference", None)
    for xref in (reference.xref or ()) if reference is not None else ():
        db = (xref.db or "").lower()
        if db in UNIPROT_DBS and xref.id:
            return f"UNIPROT:{uniprot_base(xref.id)}"
        if db == "chebi" and xref.id and (chebi := chebi_id(xref.id)):
            return chebi
    return None


def _component_ids(entity: Any, depth: int = 0) -> list[str]:
    """The UniProt / ChEBI ids inside a complex or a set, however deep (bounded: exports nest a few levels)."""
    if depth > 8:
        return []
    found = []
    for part in [*(getattr(entity, "component", None) or ()), *(entity.member_physical_entity or ())]:
        own = _own_id(part)
        found += [own] if own else _component_ids(part, depth + 1)
    return found


def _summation(comments: Iterable[str] | None) -> str:
    return next((c.strip() for c in comments or () if c and not c.startswith(_EDIT_NOTE)), "")


def _steps(objects: Iterable[Any]) -> list[ReactionStepRecord]:
    steps = []
    for step in objects:
        if not isinstance(step, bp.PathwayStep):
            continue
        before = [reactome_id(p) for p in step.step_process or () if isinstance(p, bp.Conversion)]
        for following in step.next_step or ():
            after = [reactome_id(p) for p in following.step_process or () if isinstance(p, bp.Conversion)]
            steps += [ReactionStepRecord(b, a) for b in before for a in after if b and a and b != a]
    return list(dict.fromkeys(steps))
