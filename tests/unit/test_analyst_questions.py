"""Analysts' phrasings written without reading the parser, on the demo's entities: the held-apart set (never used
to change the parser) and the dev set (used since its first read). Each question's kind, entities and flags must
be read right; a deliberately worse parser must score clearly lower, so the figures can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_project.evals.heldout import DEV_FILE, HELDOUT_FILE, load_heldout, score
from retrieval.kinds.registry import read_question
from tests.support.demo_lexicons import demo_lexicons
from tests.support.plans import six_kinds

# Floors under the measured accuracy (held-apart 0.854 at its one read, and its reaction and condition questions
# 0.865 and 0.915 at theirs; dev 0.957 after use), so a parser change that loses a few phrasings fails here. The
# measured figures are in BENCHMARKS.md.
FLOORS = {HELDOUT_FILE: 0.83, DEV_FILE: 0.95}


@pytest.mark.parametrize("path", [HELDOUT_FILE, DEV_FILE], ids=["heldout", "dev"])
def test_analysts_questions_are_read_right(path: Path) -> None:
    genes, pathways = demo_lexicons()
    items = load_heldout(path)
    assert len(items) >= 280 and len({i["kind"] for i in items}) >= 20
    metrics, rows = score(read_question, items, genes, pathways)
    wrong = [(r["id"], r["question"], r["why"]) for r in rows if not r["right"]]
    assert metrics["heldout_accuracy"] >= FLOORS[path], wrong
    worse, _ = score(six_kinds, items, genes, pathways)
    assert worse["heldout_accuracy"] < metrics["heldout_accuracy"] - 0.25
