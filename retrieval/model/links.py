"""The public page of what an answer cites: a Reactome, KEGG or HGNC node, or the PubMed / OpenAlex record a chunk
came from. Answers carry the link (`Citation.url`), so every client shows the same one."""

from __future__ import annotations

import re

_CHUNK = re.compile(r"^(reactome|kegg|pubmed|openalex|hgnc)_(.+)_\d+$")


def source_link(citation_id: str) -> str:
    """The public page of a cited node or of the document a chunk came from ('' when there is none)."""
    chunk = _CHUNK.match(citation_id)
    source, ident = (chunk.group(1), chunk.group(2)) if chunk else ("", citation_id)
    if ident.startswith("R-HSA-"):
        return f"https://reactome.org/content/detail/{ident}"
    if re.fullmatch(r"hsa\d{5}", ident):
        return f"https://www.kegg.jp/pathway/{ident}"
    if ident.startswith("HGNC:"):
        return f"https://www.genenames.org/data/gene-symbol-report/#!/hgnc_id/{ident}"
    if source == "pubmed" and ident.isdigit():
        return f"https://pubmed.ncbi.nlm.nih.gov/{ident}/"
    if source == "openalex" and re.fullmatch(r"W\d+", ident):
        return f"https://openalex.org/{ident}"
    return ""
