"""The gene and pathway lexicons of the demo dataset, read from its files with the source parsers (no services):
what the serving lexicons hold after the demo is loaded, for pure-logic tests of the question parser."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dagster_project.sources.clinvar.normalizer import diseases_of, place_associations
from dagster_project.sources.clinvar.parser import parse_clinvar
from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.kegg.parser import parse_raw as parse_kegg
from dagster_project.sources.model import ParseResult
from dagster_project.sources.reactome.parser import parse_raw as parse_reactome
from dagster_project.vocabularies.mondo import condition_synonyms, installed_mondo_file, read_vocabulary
from retrieval.model.diseases import Condition, DiseaseLexicon, normalise
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.reactions import Named, ReactionLexicon

DEMO = Path(__file__).resolve().parents[2] / "dagster_project" / "sources" / "demo_data"


def _files(source: str) -> dict[str, bytes]:
    root = DEMO / source
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def reaction_lexicon(parsed: ParseResult) -> ReactionLexicon:
    """What `read_reactions` reads from the tables once the demo's reactions are loaded."""
    compounds: dict[str, Named] = {}
    for p in sorted(parsed.participants, key=lambda p: (p.entity_id, p.name)):
        if p.entity_kind == "compound" and p.name:
            compounds.setdefault(p.entity_id, Named(p.entity_id, p.name))
    return ReactionLexicon(reactions={r.id: Named(r.id, r.name) for r in parsed.reactions}, compounds=compounds)


def disease_lexicon(hgnc: ParseResult) -> DiseaseLexicon:
    """What `read_diseases` reads from `diseases` and `condition_synonyms` once the demo's ClinVar rows are placed
    in HGNC (with the installed MONDO export's synonyms)."""
    parsed = parse_clinvar((DEMO / "clinvar" / "gene_condition_source_id.txt").read_bytes(), "demo")
    placed, _ = place_associations(parsed.associations, hgnc.genes)
    diseases = diseases_of(placed, parsed.associations)
    rows = [(d.concept_id, d.name, d.mondo_id or None, d.omim_id or None) for d in diseases]
    synonyms: dict[str, list[str]] = {}
    for synonym in condition_synonyms(rows, read_vocabulary(installed_mondo_file()), normalise):  # type: ignore[arg-type]
        synonyms.setdefault(synonym.concept_id, []).append(synonym.synonym)
    return DiseaseLexicon({d.concept_id: Condition(d.concept_id, d.name) for d in diseases}, synonyms)


@cache
def demo_lexicons() -> tuple[GeneLexicon, PathwayLexicon]:
    reactome = parse_reactome(_files("reactome"), "demo")
    kegg, _ = parse_kegg(_files("kegg"), "demo")
    hgnc = parse_hgnc((DEMO / "hgnc" / "hgnc_complete_set.txt").read_bytes(), "demo")
    pathways = PathwayLexicon(
        [(p.id, p.source, p.name) for p in reactome.pathways + kegg.pathways],
        reaction_lexicon(reactome),
        disease_lexicon(hgnc),
    )
    genes = GeneLexicon(
        [
            (
                g.hgnc_id,
                g.symbol,
                g.name,
                list(g.aliases),
                list(g.previous_symbols),
                {
                    "entrez_id": g.entrez_id,
                    "uniprot_ids": list(g.uniprot_ids),
                    "ensembl_id": g.ensembl_gene_id,
                    "locus_type": g.locus_type,
                    "location": g.location,
                },
            )
            for g in hgnc.genes
            if g.status == "Approved"
        ]
    )
    return genes, pathways


@cache
def demo_pathway_count() -> int:
    """Pathways the demo's Reactome and KEGG files hold, read with the source parsers: the graph's Pathway nodes and
    the pathway documents once the demo is loaded."""
    kegg, _ = parse_kegg(_files("kegg"), "demo")
    return len(parse_reactome(_files("reactome"), "demo").pathways) + len(kegg.pathways)
