"""Reactome's SBML level 3 export of a pathway → reactions and their participants, read with python-libsbml.

What Flux takes from the model:
- the model's `bqbiol:is` reactome term is the pathway; each reaction's is the reaction's stable id;
- reactants / products are inputs / outputs; a modifier is a catalyst (SBO:0000013), a positive regulator
  (SBO:0000459 stimulator, SBO:0000461 essential activator) or a negative regulator (SBO:0000020 inhibitor);
- a species is a gene or a compound by its own `bqbiol:is` UniProt / ChEBI term, or a complex (SBO:0000297,
  SBO:0000253) or set
  with the UniProt / ChEBI terms of its `bqbiol:hasPart`;
- the reaction's `notes` are its summation.
SBML carries no order between reactions: PRECEDES comes from BioPAX or live mode. A species without any UniProt or
ChEBI annotation is quarantined with its reason and the reaction kept; a reaction of another species is quarantined.
"""

from __future__ import annotations

import re
from typing import Any

import libsbml

from dagster_project.sources.ids import REACTOME_HUMAN, chebi_id, strip_html, uniprot_base
from dagster_project.sources.model import (
    EntityKind,
    ParseResult,
    ParticipantRole,
    Quarantined,
    ReactionParticipantRecord,
    ReactionRecord,
)

SOURCE = "reactome"
MODIFIER_ROLES: dict[str, ParticipantRole] = {
    "SBO:0000013": "catalyst",
    "SBO:0000459": "positive_regulator",
    "SBO:0000461": "positive_regulator",
    "SBO:0000020": "negative_regulator",
}
COMPLEX_SBO = {"SBO:0000297", "SBO:0000253"}  # protein complex, non-covalent complex
_REACTOME = re.compile(r"reactome[:/](R-[A-Z]{3}-\d+)$", re.IGNORECASE)
_UNIPROT = re.compile(r"uniprot[:/]([A-Z0-9-]+)$", re.IGNORECASE)
_CHEBI = re.compile(r"(CHEBI[:_]\d+)$", re.IGNORECASE)


def parse_sbml(data: bytes, raw_ref: str) -> ParseResult:
    document = libsbml.readSBMLFromString(data.decode("utf-8", errors="replace"))
    model = document.getModel()
    if model is None:
        reason = f"not an SBML model: {_first_error(document)}"
        return ParseResult(quarantined=[Quarantined(SOURCE, raw_ref.rsplit("/", 1)[-1], raw_ref, reason)])
    pathway_id = next(iter(_terms(model, "is", _REACTOME)), "")
    result = ParseResult()
    for reaction in model.getListOfReactions():
        _reaction(model, reaction, pathway_id, f"{raw_ref}#{reaction.getId()}", result)
    return result


def _reaction(model: Any, reaction: Any, pathway_id: str, where: str, result: ParseResult) -> None:
    reaction_id = next(iter(_terms(reaction, "is", _REACTOME)), "")
    if not REACTOME_HUMAN.match(reaction_id):
        why = f"reaction {reaction_id} is not human (R-HSA-)" if reaction_id else "reaction without a Reactome id"
        result.quarantined.append(Quarantined(SOURCE, reaction_id or reaction.getId(), where, why, reaction.getName()))
        return
    summary = strip_html(reaction.getNotesString() or "")
    result.reactions.append(ReactionRecord(reaction_id, reaction.getName() or reaction_id, pathway_id, summary))
    roles: list[tuple[ParticipantRole, str]] = [("input", s.getSpecies()) for s in reaction.getListOfReactants()]
    roles += [("output", s.getSpecies()) for s in reaction.getListOfProducts()]
    for modifier in reaction.getListOfModifiers():
        role = MODIFIER_ROLES.get(modifier.getSBOTermID())
        if role is not None:
            roles.append((role, modifier.getSpecies()))
    for role, species_id in roles:
        participant = _participant(reaction_id, role, model.getSpecies(species_id), where)
        (result.quarantined if isinstance(participant, Quarantined) else result.participants).append(participant)


def _participant(
    reaction_id: str, role: ParticipantRole, species: Any, where: str
) -> ReactionParticipantRecord | Quarantined:
    name = re.sub(r"\s*\[[^\]]*\]$", "", species.getName() or species.getId())  # drop the compartment suffix
    own = _own_ids(species, "is")
    if len(own) == 1:
        kind: EntityKind = "compound" if own[0].startswith("CHEBI:") else "gene"
        return ReactionParticipantRecord(reaction_id, role, kind, own[0], name)
    parts = own or _own_ids(species, "hasPart")
    if not parts:
        return Quarantined(
            SOURCE,
            f"{reaction_id}|{name}",
            where,
            f"species {name!r} ({role}) of {reaction_id} has no UniProt or ChEBI annotation",
            species.getId(),
        )
    kind = "complex" if species.getSBOTermID() in COMPLEX_SBO else "set"
    entity_id = next(iter(_terms(species, "is", _REACTOME)), species.getId())
    return ReactionParticipantRecord(reaction_id, role, kind, entity_id, name, tuple(dict.fromkeys(parts)))


def _own_ids(species: Any, qualifier: str) -> list[str]:
    genes = [uniprot_base(u) for u in _terms(species, qualifier, _UNIPROT)]
    compounds = [c for c in (chebi_id(x.replace("_", ":")) for x in _terms(species, qualifier, _CHEBI)) if c]
    return list(dict.fromkeys(genes + compounds))


def _terms(element: Any, qualifier: str, pattern: re.Pattern[str]) -> list[str]:
    """The ids matched by `pattern` in the element's biological-qualifier terms named `qualifier` (is, hasPart)."""
    found = []
    for i in range(element.getNumCVTerms()):
        term = element.getCVTerm(i)
        if term.getQualifierType() != libsbml.BIOLOGICAL_QUALIFIER:
            continue
        if libsbml.BiolQualifierType_toString(term.getBiologicalQualifierType()) != qualifier:
            continue
        for j in range(term.getNumResources()):
            match = pattern.search(term.getResourceURI(j))
            if match:
                found.append(match.group(1))
    return list(dict.fromkeys(found))


def _first_error(document: Any) -> str:
    errors = document.getNumErrors()
    return document.getError(0).getMessage().strip() if errors else "no model element"
