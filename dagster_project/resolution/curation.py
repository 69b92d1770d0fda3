"""Expert KEGG ↔ Reactome curation (ComPath's development half) and the figures a resolution is judged by.

Only the development half ships with the project's data (`FLUX_RESOLUTION_CURATION`); the other half is held out
by the people who score the project. A pair the curators did not list is "not judged", so every figure counts
only KEGG pathways the curation judged, and only pairs whose two ids exist in the graph.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

EXACT_MATCH = "skos:exactMatch"
PART_OF = "BFO:0000050"
KEGG_PREFIX = "kegg.pathway"
REACTOME_PREFIX = "reactome"
# What a curated pair is, from the model's side: an equivalence, or which side lies inside the other.
EQUIVALENT, KEGG_IN_REACTOME, REACTOME_IN_KEGG = "equivalent", "kegg_in_reactome", "reactome_in_kegg"


class CurationError(ValueError):
    """The curation file cannot be read as ComPath mappings; the message names the line."""


@dataclass(frozen=True)
class Curation:
    pairs: dict[tuple[str, str], str]  # (reactome_id, kegg_id) → EQUIVALENT / KEGG_IN_REACTOME / REACTOME_IN_KEGG
    judged_kegg: frozenset[str]

    def restricted_to(self, present: set[str]) -> Curation:
        """Only pairs whose two ids exist (the rest cannot be found by any method)."""
        return Curation({p: v for p, v in self.pairs.items() if p[0] in present and p[1] in present}, self.judged_kegg)

    def with_kegg(self, kegg_ids: Iterable[str]) -> Curation:
        keep = set(kegg_ids)
        return Curation({p: v for p, v in self.pairs.items() if p[1] in keep}, self.judged_kegg & keep)

    def of_kind(self, *kinds: str) -> set[tuple[str, str]]:
        return {pair for pair, kind in self.pairs.items() if kind in kinds}


def load_curation(path: Path) -> Curation:
    """Read the 7-column ComPath TSV. An equivalence outranks a part-of listed for the same pair (the curation
    lists a few pairs both ways)."""
    pairs: dict[tuple[str, str], str] = {}
    judged: set[str] = set()
    with path.open(newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        header = next(rows, None)
        if header is None or len(header) != 7:
            raise CurationError(f"{path}: expected a 7-column header, got {header!r}")
        for line, row in enumerate(rows, start=2):
            if not row:
                continue
            if len(row) != 7:
                raise CurationError(f"{path}:{line}: expected 7 columns, got {len(row)}")
            source_prefix, source_id, _, relation, target_prefix, target_id, _ = row
            pair, kind = _pair(source_prefix, source_id, relation, target_prefix, target_id, f"{path}:{line}")
            judged.add(pair[1])
            if pairs.get(pair) != EQUIVALENT:
                pairs[pair] = kind
    return Curation(pairs, frozenset(judged))


def _pair(
    source_prefix: str, source_id: str, relation: str, target_prefix: str, target_id: str, where: str
) -> tuple[tuple[str, str], str]:
    prefixes = (source_prefix, target_prefix)
    if prefixes == (KEGG_PREFIX, REACTOME_PREFIX):
        pair, inside = (target_id, source_id), KEGG_IN_REACTOME
    elif prefixes == (REACTOME_PREFIX, KEGG_PREFIX):
        pair, inside = (source_id, target_id), REACTOME_IN_KEGG
    else:
        raise CurationError(f"{where}: not a KEGG/Reactome pair: {prefixes}")
    if relation == EXACT_MATCH:
        return pair, EQUIVALENT
    if relation == PART_OF:
        return pair, inside  # the subject is part of the object
    raise CurationError(f"{where}: unknown relation {relation!r}")


def resolution_metrics(predicted: Iterable[tuple[str, str, str, str]], curation: Curation) -> dict[str, float]:
    """Figures for predictions (reactome_id, kegg_id, relation, direction) against the curation, which should be
    restricted to ids that exist. Predictions on KEGG pathways the curation did not judge are ignored."""
    equivalent: set[tuple[str, str]] = set()
    part_of: dict[tuple[str, str], str] = {}
    for reactome_id, kegg_id, relation, direction in predicted:
        if kegg_id not in curation.judged_kegg:
            continue
        if relation == EQUIVALENT:
            equivalent.add((reactome_id, kegg_id))
        elif relation == "part_of":
            part_of[(reactome_id, kegg_id)] = direction
    curated_eq = curation.of_kind(EQUIVALENT)
    curated_part = {p: v for p, v in curation.pairs.items() if v != EQUIVALENT}
    listed = set(curation.pairs)
    found_part = set(part_of) & set(curated_part)
    return {
        "equivalence_recall": _ratio(len(equivalent & curated_eq), len(curated_eq)),
        "equivalence_precision_strict": _ratio(len(equivalent & curated_eq), len(equivalent)),
        "equivalence_precision_lenient": _ratio(len(equivalent & listed), len(equivalent)),
        "equivalent_predicted": float(len(equivalent)),
        "equivalent_curated": float(len(curated_eq)),
        "part_of_recall": _ratio(len(found_part), len(curated_part)),
        "part_of_direction_accuracy": _ratio(sum(part_of[p] == curated_part[p] for p in found_part), len(found_part)),
        "part_of_precision_lenient": _ratio(len(set(part_of) & listed), len(part_of)),
        "part_of_predicted": float(len(part_of)),
        "part_of_curated": float(len(curated_part)),
        "kegg_pathways_judged": float(len(curation.judged_kegg)),
    }


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0
