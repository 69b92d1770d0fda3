"""HGNC gene table → GeneRecords. Reads the HGNC complete set (lower-case headers, '|' multi-values) and the
HGNC custom-download export (title-case headers, ', ' multi-values) used by the snapshot."""

from __future__ import annotations

import csv
import gzip
import io
import json

from dagster_project.sources.ids import ENSEMBL, ENTREZ, UNIPROT, split_multi, uniprot_base
from dagster_project.sources.model import GeneRecord, ParseResult, Quarantined

SOURCE = "hgnc"
# logical field -> accepted header names (complete set first, custom download second)
COLUMNS = {
    "hgnc_id": ("hgnc_id", "HGNC ID"),
    "symbol": ("symbol", "Approved symbol"),
    "name": ("name", "Approved name"),
    "status": ("status", "Status"),
    "aliases": ("alias_symbol", "Alias symbols"),
    "previous": ("prev_symbol", "Previous symbols"),
    "entrez": ("entrez_id", "NCBI Gene ID(supplied by NCBI)", "NCBI Gene ID"),
    "uniprot": ("uniprot_ids", "UniProt ID(supplied by UniProt)", "UniProt ID"),
    "locus_type": ("locus_type", "Locus type"),
    "ensembl": ("ensembl_gene_id", "Ensembl gene ID", "Ensembl ID(supplied by Ensembl)"),
    "location": ("location", "Chromosome"),
}
REQUIRED = ("hgnc_id", "symbol")  # a row needs both to become a gene


def _resolve_header(header: list[str]) -> dict[str, str]:
    """Logical field → the header name this file uses for it; fields the file lacks are left out."""
    resolved = {}
    for field, names in COLUMNS.items():
        match = next((n for n in names if n in header), None)
        if match:
            resolved[field] = match
    return resolved


def _missing_columns(raw_ref: str, header: list[str], cols: dict[str, str]) -> Quarantined | None:
    """Without an id and a symbol no row can become a gene: the table is quarantined once, as a whole, rather
    than raising (which would stop the asset) or quarantining every row for the same cause."""
    missing = [field for field in REQUIRED if field not in cols]
    if not missing:
        return None
    reason = "; ".join(f"HGNC table lacks a {field} column (one of {', '.join(COLUMNS[field])})" for field in missing)
    return Quarantined(SOURCE, raw_ref.rsplit("/", 1)[-1], raw_ref, reason, "\t".join(header)[:2000])


def _gene(row: dict[str, str], cols: dict[str, str], raw_ref: str) -> GeneRecord | Quarantined:
    values = {field: (row.get(header) or "").strip() for field, header in cols.items()}
    get = values.get
    hgnc_id, symbol = values["hgnc_id"], values["symbol"]
    if not hgnc_id.startswith("HGNC:") or not symbol:
        return Quarantined(SOURCE, hgnc_id or "?", raw_ref, "row without HGNC id or symbol", json.dumps(row)[:2000])
    entrez, ensembl = get("entrez", ""), get("ensembl", "")
    uniprot = tuple(dict.fromkeys(uniprot_base(u) for u in split_multi(get("uniprot")) if UNIPROT.match(u)))
    return GeneRecord(
        hgnc_id=hgnc_id,
        symbol=symbol,
        name=get("name", ""),
        status=get("status") or "Approved",
        aliases=split_multi(get("aliases")),
        previous_symbols=split_multi(get("previous")),
        entrez_id=entrez if ENTREZ.match(entrez) else None,
        uniprot_ids=uniprot,
        locus_type=get("locus_type", ""),
        ensembl_gene_id=ensembl if ENSEMBL.match(ensembl) else "",
        location=get("location", ""),
    )


def parse_hgnc(data: bytes, raw_ref: str) -> ParseResult:
    text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8-sig")
    reader = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = list(reader.fieldnames or [])
    cols = _resolve_header(header)
    result = ParseResult()
    if bad_table := _missing_columns(raw_ref, header, cols):
        result.quarantined.append(bad_table)
        return result
    for row in reader:
        parsed = _gene(row, cols, raw_ref)
        (result.genes if isinstance(parsed, GeneRecord) else result.quarantined).append(parsed)
    return result
