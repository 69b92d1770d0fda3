"""Reactome's reaction-level exports in ../shared/data/reactome/reactions: BioPAX level 3 (Glycolysis, release 84,
and the regulation of the pyruvate dehydrogenase complex) read with pybiopax, SBML level 3 (Cell-Cell communication,
Aryl hydrocarbon receptor signalling) read with python-libsbml. Counted against the files, with the bad cases the
exports really hold (a drug with no ChEBI cross-reference) and ones built here (a species without an annotation, a
reaction of another species, a file that is not SBML)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from dagster_project.sources.reactome.biopax import parse_biopax
from dagster_project.sources.reactome.normalizer import drop_dangling_reactions, normalize_reactions
from dagster_project.sources.reactome.parser import parse_reaction_exports

SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
REACTIONS = SNAPSHOT / "reactome" / "reactions"
pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not REACTIONS.is_dir(), reason=f"reaction exports not found at {REACTIONS}"),
]


def _read(name: str) -> bytes:
    return (REACTIONS / name).read_bytes()


def test_glycolysis_biopax_reactions_participants_and_order() -> None:
    result = parse_biopax(_read("R-HSA-70171_level3.biopax.owl"), "raw/70171")
    assert len(result.reactions) == 24 and not result.quarantined
    # Reactions sit in the pathway that lists them: Glycolysis itself or one of its two sub-pathways.
    assert Counter(r.pathway_id for r in result.reactions) == {"R-HSA-70171": 15, "R-HSA-170822": 5, "R-HSA-9634600": 4}
    binding = next(r for r in result.reactions if r.id == "R-HSA-170824")
    assert binding.summary.startswith("Glucokinase (GCK1) reversibly binds") and "Edited:" not in binding.summary
    inputs = {
        (p.entity_kind, p.entity_id) for p in result.participants if p.reaction_id == binding.id and p.role == "input"
    }
    assert inputs == {("gene", "Q14397"), ("gene", "P35557")}  # GCKR, GCK
    complex_ = next(p for p in result.participants if p.entity_id == "R-HSA-170827")
    assert complex_.entity_kind == "complex" and set(complex_.components) == {"Q14397", "P35557"}
    roles = Counter(p.role for p in result.participants)
    assert roles["catalyst"] == 20 and roles["positive_regulator"] and roles["negative_regulator"]
    assert len(result.steps) == 23 and ("R-HSA-170824", "R-HSA-170796") in {
        (s.preceding_id, s.following_id) for s in result.steps
    }
    kept = {r.id for r in result.reactions}
    assert all(s.preceding_id in kept and s.following_id in kept for s in result.steps)


def test_a_participant_without_a_cross_reference_is_quarantined_and_its_reaction_kept() -> None:
    result = parse_biopax(_read("R-HSA-204174_level3.biopax.owl"), "raw/204174")
    assert len(result.reactions) == 4
    assert result.quarantined and all(
        "'DCA'" in q.reason and "no UniProt or ChEBI" in q.reason for q in result.quarantined
    )
    assert {q.record_key.split("|")[0] for q in result.quarantined} <= {r.id for r in result.reactions}
    assert any(p.reaction_id == "R-HSA-9011595" and p.entity_id == "CHEBI:15377" for p in result.participants)


def test_sbml_reactions_modifiers_and_complexes() -> None:
    # The SBML tests import python-libsbml themselves (the parser does on first use): it takes half a second to load.
    from dagster_project.sources.reactome.sbml import parse_sbml

    communication = parse_sbml(_read("R-HSA-1500931.sbml"), "raw/1500931")
    assert len(communication.reactions) == 60 and not communication.quarantined
    assert {r.pathway_id for r in communication.reactions} == {"R-HSA-1500931"}
    roles = Counter(p.role for p in communication.participants)
    assert roles["catalyst"] == 2 and roles["negative_regulator"] == 1
    ahr = parse_sbml(_read("R-HSA-8937144.sbml"), "raw/8937144")
    assert ahr.reactions[0].id == "R-HSA-8937191" and len(ahr.reactions) == 5
    first = ahr.reactions[0]
    assert first.summary.startswith("After ligand binding and activation") and "<p" not in first.summary
    dissociating = next(p for p in ahr.participants if p.entity_id == "R-HSA-8937154")
    assert dissociating.entity_kind == "complex" and "CHEBI:28119" in dissociating.components
    assert dissociating.name == "AHR:TCDD:2xHSP90AB1:AIP:PTGES3"  # the compartment suffix dropped
    assert not ahr.steps  # SBML holds no order between reactions


def _sbml(reaction_id: str, annotated: bool) -> bytes:
    import libsbml

    document = libsbml.SBMLDocument(3, 1)
    model = document.createModel()
    model.setId("pathway_1")
    model.setMetaId("m1")
    compartment = model.createCompartment()
    compartment.setId("c")
    compartment.setConstant(True)
    for sid, uri in (("s1", "https://purl.uniprot.org/uniprot/P04637"), ("s2", None)):
        species = model.createSpecies()
        species.setId(sid)
        species.setName(f"{sid} [cytosol]")
        species.setMetaId(f"meta_{sid}")
        for attribute in (
            species.setCompartment("c"),
            species.setHasOnlySubstanceUnits(False),
            species.setBoundaryCondition(False),
            species.setConstant(False),
        ):
            assert attribute == libsbml.LIBSBML_OPERATION_SUCCESS
        if uri and annotated:
            term = libsbml.CVTerm(libsbml.BIOLOGICAL_QUALIFIER)
            term.setBiologicalQualifierType(libsbml.BQB_IS)
            term.addResource(uri)
            species.addCVTerm(term)
    reaction = model.createReaction()
    reaction.setId("r1")
    reaction.setMetaId("meta_r1")
    reaction.setReversible(False)
    term = libsbml.CVTerm(libsbml.BIOLOGICAL_QUALIFIER)
    term.setBiologicalQualifierType(libsbml.BQB_IS)
    term.addResource(f"https://identifiers.org/reactome:{reaction_id}")
    reaction.addCVTerm(term)
    for sid, add in (("s1", reaction.createReactant), ("s2", reaction.createProduct)):
        reference = add()
        reference.setSpecies(sid)
        reference.setConstant(True)
    return libsbml.writeSBMLToString(document).encode()


def test_sbml_bad_input_is_quarantined_with_its_reason() -> None:
    from dagster_project.sources.reactome.sbml import parse_sbml

    result = parse_sbml(_sbml("R-HSA-1", annotated=True), "raw/made")
    assert [r.id for r in result.reactions] == ["R-HSA-1"]
    assert [(p.role, p.entity_kind, p.entity_id, p.name) for p in result.participants] == [
        ("input", "gene", "P04637", "s1")
    ]
    [species] = result.quarantined
    assert species.reason == "species 's2' (output) of R-HSA-1 has no UniProt or ChEBI annotation"
    [mouse] = parse_sbml(_sbml("R-MMU-1", annotated=True), "raw/made").quarantined
    assert mouse.reason == "reaction R-MMU-1 is not human (R-HSA-)"
    [not_sbml] = parse_sbml(b"<html><body>502 Bad Gateway</body></html>", "raw/page").quarantined
    assert not_sbml.reason.startswith("not an SBML model")


def test_the_snapshot_reads_every_export_and_keeps_a_reaction_once() -> None:
    files = {f"reactome/reactions/{p.name}": p.read_bytes() for p in sorted(REACTIONS.iterdir())}
    result = parse_reaction_exports(
        {**files, "reactome/reactions/copy.sbml": files["reactome/reactions/R-HSA-8937144.sbml"]}, "raw"
    )
    assert len(result.reactions) == 24 + 4 + 60 + 5 == len({r.id for r in result.reactions})
    assert len(result.participants) == len(set(result.participants))


def test_reactions_of_pathways_not_held_are_quarantined_with_their_participants_and_steps() -> None:
    records = parse_biopax(_read("R-HSA-70171_level3.biopax.owl"), "raw")
    quarantined = drop_dangling_reactions(records, {"R-HSA-70171"})
    assert len(records.reactions) == 15 and len(quarantined) == 9
    assert {q.reason.split(" names pathway ")[1].split(",")[0] for q in quarantined} == {
        "R-HSA-170822",
        "R-HSA-9634600",
    }
    kept = {r.id for r in records.reactions}
    assert {p.reaction_id for p in records.participants} <= kept
    assert all(s.preceding_id in kept and s.following_id in kept for s in records.steps)
    documents = normalize_reactions(records.reactions, {"R-HSA-70171": "Glycolysis"})
    assert documents and all(
        d.type == "reaction" and d.content and d.metadata["pathway"] == "Glycolysis" for d in documents
    )
    assert len(documents) == sum(1 for r in records.reactions if r.summary)
