"""How many conditions named in outside-written statements the question reader grounds to a ClinVar condition, with
and without MONDO's synonyms (dagster_project/vocabularies/mondo.py).

The statements are BiomixQA's gene-disease ones ("X associates Gene G", "X is not associated with Gene G") from
`<snapshot>/biomixqa/true_false_dev.csv` (the dev half: figures on it are dev figures); the conditions are every
condition of the snapshot's ClinVar file, read with the source's parser. Each statement's condition words X are read
by the reader's lexicon, and ClinVar itself judges the grounding: "linked" when a condition found is one ClinVar
links to gene G (every true statement, and most negated ones, name a linked pair), "not linked" when none is."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

from dagster_project.sources.clinvar.parser import parse_clinvar
from dagster_project.vocabularies.mondo import Vocabulary, condition_synonyms
from retrieval.model.diseases import Condition, DiseaseLexicon, normalise

STATEMENT = re.compile(r"^(?P<condition>.+?) (?:is not associated with|associates) Gene (?P<gene>\S+)$")


def snapshot_lexicons(snapshot: Path, vocabulary: Vocabulary) -> tuple[DiseaseLexicon, DiseaseLexicon, dict]:  # type: ignore[type-arg]
    """(ClinVar names only, names and MONDO synonyms, concept id → the gene symbols ClinVar links to it)."""
    parsed = parse_clinvar((snapshot / "clinvar" / "gene_condition_source_id.txt").read_bytes(), "snapshot")
    names: dict[str, Condition] = {}
    ids: dict[str, tuple[str | None, str | None]] = {}
    linked: dict[str, set[str]] = {}
    for a in parsed.associations:
        names.setdefault(a.concept_id, Condition(a.concept_id, a.disease_name))
        mondo, omim = ids.get(a.concept_id, (None, None))
        ids[a.concept_id] = (
            mondo or (a.source_id if a.source_id.startswith("MONDO:") else None),
            omim or a.disease_mim or None,
        )
        linked.setdefault(a.concept_id, set()).add(a.gene_symbol.upper())
    rows = [(cid, c.name, *ids[cid]) for cid, c in names.items()]
    synonyms: dict[str, list[str]] = {}
    for row in condition_synonyms(rows, vocabulary, normalise):
        synonyms.setdefault(row.concept_id, []).append(row.synonym)
    return DiseaseLexicon(names), DiseaseLexicon(names, synonyms), linked


def statements(snapshot: Path) -> list[re.Match[str]]:
    with (snapshot / "biomixqa" / "true_false_dev.csv").open(newline="") as handle:
        return [m for row in csv.DictReader(handle) if (m := STATEMENT.match(row["statement"].strip()))]


def tally(lexicon: DiseaseLexicon, linked: dict[str, set[str]], said: list[re.Match[str]]) -> Counter[str]:
    """Per statement: "not grounded", or "exact" / "closest name", each "linked" or "not linked" to its gene."""
    counts: Counter[str] = Counter()
    for statement in said:
        match = lexicon.match(statement["condition"])
        if match is None:
            counts["not grounded"] += 1
            continue
        right = any(statement["gene"].upper() in linked.get(c.id, ()) for c in match.conditions)
        counts[f"{'exact' if match.exact else 'closest name'}, {'linked' if right else 'not linked'}"] += 1
    return counts
