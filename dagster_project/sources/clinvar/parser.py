"""ClinVar's gene-condition table (`gene_condition_source_id`, tab-delimited, plain or gzipped) → associations.

NCBI's README for the ClinVar FTP `tab_delimited` folder documents the columns: GeneID, AssociatedGenes (the symbol
when the gene is associated with the condition), RelatedGenes (the symbol when it is only related, e.g. inside a
multi-gene deletion), ConceptID (MedGen), DiseaseName, SourceName and SourceID (the asserting source and its id),
DiseaseMIM and LastUpdated. The header line starts with '#'.
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import datetime

from dagster_project.sources.ids import ENTREZ
from dagster_project.sources.model import DiseaseAssociationRecord, ParseResult, Quarantined

SOURCE = "clinvar"
COLUMNS = (
    "GeneID",
    "AssociatedGenes",
    "RelatedGenes",
    "ConceptID",
    "DiseaseName",
    "SourceName",
    "SourceID",
    "DiseaseMIM",
    "LastUpdated",
)
REQUIRED = ("GeneID", "AssociatedGenes", "RelatedGenes", "ConceptID", "DiseaseName")
MEDGEN_CONCEPT = re.compile(r"^CN?\d+$")
MIM = re.compile(r"^\d{6}$")
_GZIP_MAGIC = b"\x1f\x8b"


def parse_clinvar(data: bytes, raw_ref: str) -> ParseResult:
    """Every row becomes an association or a quarantined record with its reason; a table without the columns a row
    needs is quarantined once, as a whole."""
    text = _decode(data, raw_ref)
    if isinstance(text, Quarantined):
        return ParseResult(quarantined=[text])
    lines = text.splitlines()
    header = lines[0].lstrip("#").split("\t") if lines else []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        reason = f"ClinVar gene-condition table lacks the column(s) {', '.join(missing)}"
        return ParseResult(
            quarantined=[
                Quarantined(SOURCE, raw_ref.rsplit("/", 1)[-1], raw_ref, reason, lines[0][:2000] if lines else "")
            ]
        )
    result = ParseResult()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        record = _association(line, header, f"{raw_ref}#L{number}")
        (result.quarantined if isinstance(record, Quarantined) else result.associations).append(record)
    return result


def _decode(data: bytes, raw_ref: str) -> str | Quarantined:
    try:
        raw = gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data
    except (OSError, EOFError) as exc:  # a download cut short ends mid-stream
        return Quarantined(
            SOURCE, raw_ref.rsplit("/", 1)[-1], raw_ref, f"unreadable gzip ({exc}): a truncated download?", ""
        )
    return raw.decode("utf-8", errors="replace")


def _association(line: str, header: list[str], where: str) -> DiseaseAssociationRecord | Quarantined:
    fields = line.split("\t")
    if len(fields) != len(header):
        return Quarantined(
            SOURCE,
            fields[0] or "?",
            where,
            f"row has {len(fields)} fields, the header {len(header)}: a truncated or re-wrapped line",
            line[:2000],
        )
    row = {name: value.strip() for name, value in zip(header, fields, strict=True)}
    associated, related = row["AssociatedGenes"], row["RelatedGenes"]
    symbol = associated or related
    key = f"{row['GeneID'] or '?'}|{row['ConceptID'] or '?'}"
    problem = _problem(row, symbol)
    if problem:
        return Quarantined(SOURCE, key, where, problem, json.dumps(row)[:2000])
    return DiseaseAssociationRecord(
        gene_entrez_id=row["GeneID"],
        gene_symbol=symbol,
        concept_id=row["ConceptID"],
        disease_name=row["DiseaseName"],
        source_name=row.get("SourceName", ""),
        source_id=row.get("SourceID", ""),
        disease_mim=row.get("DiseaseMIM", "") if MIM.match(row.get("DiseaseMIM", "")) else "",
        relation="associated" if associated else "related",
        last_updated=_iso_date(row.get("LastUpdated", "")),
    )


def _problem(row: dict[str, str], symbol: str) -> str:
    if not symbol:
        return "row without a gene symbol (AssociatedGenes and RelatedGenes both empty)"
    if not ENTREZ.match(row["GeneID"]):
        return f"GeneID {row['GeneID']!r} is not an NCBI Gene id"
    if not row["ConceptID"]:
        return "row without a MedGen concept id (a condition is keyed by it)"
    if not MEDGEN_CONCEPT.match(row["ConceptID"]):
        return f"ConceptID {row['ConceptID']!r} is not a MedGen concept id"
    if not row["DiseaseName"]:
        return "row without a condition name"
    return ""


def _iso_date(value: str) -> str:
    """ClinVar writes 'Feb 16 2016' and, in later rows, '21 Dec 2021'; an unreadable date is left empty rather than
    costing the row."""
    for layout in ("%b %d %Y", "%d %b %Y"):
        try:
            return datetime.strptime(value, layout).date().isoformat()
        except ValueError:
            continue
    return ""
