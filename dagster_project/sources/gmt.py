"""Gene-set files (GMT) and MSigDB set names, shared by the KEGG and Reactome parsers of the 2019 era.

A GMT line is `<set id>\t<description>\t<member>\t<member>…`; MSigDB names a set `<COLLECTION>_<WORDS>` in upper
snake case (`KEGG_CELL_CYCLE`), which `msigdb_title` turns back into a readable name.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterator

_UPPER_WORD = re.compile(r"^[A-Z]\d*$")


def read_gmt(text: str) -> Iterator[tuple[int, str, str, list[str]]]:
    """(line number, set id, description, members) per non-empty line; empty padding fields are dropped."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        members = [c.strip() for c in cols[2:] if c.strip()]
        yield number, cols[0].strip(), (cols[1].strip() if len(cols) > 1 else ""), members


def msigdb_title(name: str, collection: str) -> str:
    """`KEGG_CELL_CYCLE` → `Cell cycle`: the collection prefix dropped, words lower-cased except single letters and
    letter-digit tokens (`MHC_CLASS_I`, `G1_S`), which keep their case."""
    words = name.removeprefix(f"{collection}_").split("_")
    shown = [w if _UPPER_WORD.match(w) or any(ch.isdigit() for ch in w) else w.lower() for w in words if w]
    text = " ".join(shown)
    return text[:1].upper() + text[1:]


def msigdb_reactome_names(labels_gz: bytes, xrefs: bytes, names_in_release: set[str]) -> dict[str, str]:
    """R-HSA id → MSigDB set name, for the MSigDB sets of one release (`names_in_release`): MSigDB's labels file
    gives each set's `M…` id, its SSSOM cross-references link that id to the Reactome pathway."""
    ids = {
        row["name"]: row["curie"]
        for row in csv.DictReader(io.StringIO(gzip.decompress(labels_gz).decode("utf-8")), delimiter="\t")
        if row.get("predicate") == "rdfs:label" and row.get("name") in names_in_release
    }
    pathway_of = {
        row["subject_id"]: row["object_id"].removeprefix("reactome:")
        for row in csv.DictReader(io.StringIO(xrefs.decode("utf-8")), delimiter="\t")
        if (row.get("object_id") or "").startswith("reactome:")
    }
    return {pathway_of[curie]: name for name, curie in ids.items() if curie in pathway_of}


def normalized_name(name: str) -> str:
    """The words of a pathway name, lower-cased, punctuation dropped: two releases that spell one name with other
    punctuation or case (`Glycolysis / Gluconeogenesis`, `GLYCOLYSIS_GLUCONEOGENESIS`) have one normalized name."""
    return " ".join(re.findall(r"[a-z0-9]+", name.lower()))
