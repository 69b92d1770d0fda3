"""Identifier patterns and clean-ups shared by the parsers and the asset checks."""

from __future__ import annotations

import html
import re

UNIPROT = re.compile(r"^(?:[OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{2}[0-9]){1,2})(?:-\d+)?$")
REACTOME_HUMAN = re.compile(r"^R-HSA-\d+$")
REACTOME_ANY = re.compile(r"^R-[A-Z]{3}-\d+$")
KEGG_PATHWAY = re.compile(r"^hsa\d{5}$")
KEGG_COMPOUND = re.compile(r"^C\d{5}$")
OPENALEX_WORK = re.compile(r"^W\d+$")
PMID = re.compile(r"^\d{1,9}$")
CHEBI = re.compile(r"^(?:CHEBI:)?(\d+)$", re.IGNORECASE)
ENTREZ = re.compile(r"^\d+$")
ENSEMBL = re.compile(r"^ENSG\d{11}$")

_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_KEGG_SPECIES_SUFFIX = re.compile(r"\s+-\s+Homo sapiens \(human\)\s*$")


def uniprot_base(accession: str) -> str:
    """P42224-1 → P42224: memberships are compared per protein, not per isoform."""
    return accession.split("-", 1)[0]


def chebi_id(raw: str) -> str | None:
    """'15422', 'CHEBI:15422' and 'chebi:15422' all become 'CHEBI:15422'."""
    match = CHEBI.match(raw.strip())
    return f"CHEBI:{match.group(1)}" if match else None


def strip_html(text: str) -> str:
    """Reactome summations carry <p>, <br> and entities; keep the words, one space between them."""
    text = re.sub(r"(?i)<br\s*/?>|</p>", " ", text)
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()


def kegg_pathway_name(name: str) -> str:
    """'Glycolysis / Gluconeogenesis - Homo sapiens (human)' → 'Glycolysis / Gluconeogenesis'."""
    return _KEGG_SPECIES_SUFFIX.sub("", name).strip()


def split_multi(cell: str | None) -> tuple[str, ...]:
    """HGNC cells hold several values separated by '|' (complete set) or ', ' (other exports)."""
    if not cell:
        return ()
    parts = re.split(r"\s*[|,;]\s*", cell.strip().strip('"'))
    return tuple(dict.fromkeys(p for p in parts if p))
