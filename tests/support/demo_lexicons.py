"""The gene and pathway lexicons of the demo dataset, read from its files with the source parsers (no services):
what the serving lexicons hold after the demo is loaded, for pure-logic tests of the question parser."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.kegg.parser import parse_raw as parse_kegg
from dagster_project.sources.reactome.parser import parse_raw as parse_reactome
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon

DEMO = Path(__file__).resolve().parents[2] / "dagster_project" / "sources" / "demo_data"


def _files(source: str) -> dict[str, bytes]:
    root = DEMO / source
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


@cache
def demo_lexicons() -> tuple[GeneLexicon, PathwayLexicon]:
    reactome = parse_reactome(_files("reactome"), "demo")
    kegg, _ = parse_kegg(_files("kegg"), "demo")
    hgnc = parse_hgnc((DEMO / "hgnc" / "hgnc_complete_set.txt").read_bytes(), "demo")
    pathways = PathwayLexicon([(p.id, p.source, p.name) for p in reactome.pathways + kegg.pathways])
    genes = GeneLexicon([(g.hgnc_id, g.symbol, g.name, list(g.aliases), list(g.previous_symbols),
                          {"entrez_id": g.entrez_id, "uniprot_ids": list(g.uniprot_ids),
                           "ensembl_id": g.ensembl_gene_id, "locus_type": g.locus_type, "location": g.location})
                         for g in hgnc.genes if g.status == "Approved"])
    return genes, pathways
