"""What the ClinVar tables hold, read once for the question-kind evaluation straight from Postgres
(`disease_associations`, `diseases`, approved genes of `gene_identifiers`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.engine import Engine

ASSOCIATIONS = """
SELECT a.concept_id, d.name, g.hgnc_id, g.symbol FROM disease_associations a
JOIN diseases d USING (concept_id) JOIN gene_identifiers g ON g.hgnc_id = a.hgnc_id AND g.status = 'Approved'
ORDER BY a.concept_id, g.symbol
"""


@dataclass
class ConditionTruth:
    names: dict[str, str] = field(default_factory=dict)  # concept → name
    genes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # concept → symbols
    conditions: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # symbol → concepts
    hgnc: dict[str, str] = field(default_factory=dict)  # symbol → HGNC id


def load_condition_truth(engine: Engine) -> ConditionTruth:
    truth = ConditionTruth()
    with engine.connect() as conn:
        for row in conn.execute(text(ASSOCIATIONS)):
            truth.names[row.concept_id] = row.name
            truth.genes[row.concept_id].add(row.symbol)
            truth.conditions[row.symbol].add(row.concept_id)
            truth.hgnc[row.symbol] = row.hgnc_id
    return truth
