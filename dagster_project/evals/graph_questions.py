"""Relational questions generated from the graph being evaluated, for every graph question kind.

Pathways, gene pairs, counterparts and hierarchies are sampled with a fixed seed from what the graph holds (not
picked to pass), each asked with one of several phrasings, and carry what a right answer must name: the expected
ids (any one of them in the answer's claims) and, for list kinds, the pathways whose genes the list must match.
Only pathways whose name is unique in the graph are asked about by name, so every question has one reading.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, TypeVar

from dagster_project.evals.questions import EvalQuestion
from retrieval.model.pathways import fold

if TYPE_CHECKING:
    from neo4j import Driver

T = TypeVar("T")
PER_KIND = 25
SEED = 11
LABEL = {"reactome": "Reactome", "kegg": "KEGG"}

PATHWAYS = """
MATCH (p:Pathway)
CALL (p) { OPTIONAL MATCH (p)-[:HAS_MEMBER]->(g:Gene) RETURN count(g) AS genes }
RETURN p.id AS id, p.name AS name, p.source AS source, genes ORDER BY p.id
"""
EQUIVALENTS = """
MATCH (r:Pathway)-[:EQUIVALENT_TO]->(k:Pathway) RETURN r.id AS r, k.id AS k ORDER BY r.id, k.id
"""
CHILDREN = """
MATCH (c:Pathway)-[:SUBPATHWAY_OF]->(p:Pathway) WITH p, c ORDER BY c.id RETURN p.id AS id, collect(c.id) AS children
ORDER BY p.id
"""
MEMBER_SYMBOLS = """
MATCH (p:Pathway {id: $id})-[:HAS_MEMBER]->(g:Gene) WHERE g.symbol =~ '[A-Z][A-Z0-9]{2,}'
RETURN g.symbol AS symbol ORDER BY g.symbol
"""
CONTAINING_BOTH = """
MATCH (p:Pathway)-[:HAS_MEMBER]->(g:Gene) WHERE g.symbol IN $symbols
WITH p, count(DISTINCT g) AS n WHERE n = size($symbols) RETURN collect(p.id) AS ids
"""

MEMBER_PHRASES = (
    "Which genes belong to the {src} pathway '{name}'?",
    "List the member genes of {src} {name}.",
    "What genes are in the {src} pathway {name}?",
)
COUNTERPART_PHRASES = (
    "Which {dst} pathway corresponds to {src}'s {name}?",
    "What is the {dst} counterpart of the {src} pathway '{name}'?",
    "Which {dst} pathway is equivalent to {src} {name}?",
)
SHARED_PHRASES = (
    "Which genes do {src_a} '{a}' and {src_b} '{b}' share?",
    "What genes do the {src_a} pathway '{a}' and the {src_b} pathway '{b}' have in common?",
)
COMPARE_PHRASES = ("Compare {src_a} '{a}' and {src_b} '{b}'.", "How does {src_a} '{a}' differ from {src_b} '{b}'?")
HIERARCHY_PHRASES = ("What are the sub-pathways of {src} '{name}'?", "Which sub-pathways does {src} {name} have?")
GENE_PAIR_PHRASES = ("Which pathways contain both {g1} and {g2}?", "In which pathways do {g1} and {g2} occur together?")
GENE_COMPARE_PHRASES = ("How do {g1} and {g2} differ in their pathways?", "Compare {g1} and {g2}.")


def generate(driver: Driver, per_kind: int = PER_KIND, seed: int = SEED) -> list[EvalQuestion]:
    rng = random.Random(seed)
    rows = [r.data() for r in driver.execute_query(PATHWAYS).records]
    counts = Counter(fold(r["name"] or "") for r in rows)
    # Named by a unique name, with enough members to make a list worth asking for.
    named = {r["id"]: r for r in rows if r["name"] and counts[fold(r["name"])] == 1 and r["genes"] >= 3}
    equivalents = [
        (r["r"], r["k"]) for r in driver.execute_query(EQUIVALENTS).records if r["r"] in named and r["k"] in named
    ]
    parents = [(r["id"], r["children"]) for r in driver.execute_query(CHILDREN).records if r["id"] in named]
    questions: list[EvalQuestion] = []
    for pid in _sample(rng, sorted(named), per_kind):
        p = named[pid]
        text = rng.choice(MEMBER_PHRASES).format(src=LABEL[p["source"]], name=p["name"])
        questions.append(EvalQuestion(f"gen-members-{pid}", text, expected=(pid,), kind="members", gene_list_of=(pid,)))
    for rid, kid in _sample(rng, equivalents, per_kind):
        source, target = rng.choice([(rid, kid), (kid, rid)])
        s, t = named[source], named[target]
        text = rng.choice(COUNTERPART_PHRASES).format(src=LABEL[s["source"]], dst=LABEL[t["source"]], name=s["name"])
        questions.append(EvalQuestion(f"gen-counterpart-{source}", text, expected=(target,), kind="counterpart"))
    for rid, kid in _sample(rng, equivalents, per_kind):
        a, b = named[rid], named[kid]
        values = {"src_a": "Reactome", "a": a["name"], "src_b": "KEGG", "b": b["name"]}
        questions.append(
            EvalQuestion(
                f"gen-shared-{rid}-{kid}",
                rng.choice(SHARED_PHRASES).format(**values),
                expected=(rid, kid),
                kind="shared_genes",
                gene_list_of=(rid, kid),
            )
        )
        questions.append(
            EvalQuestion(
                f"gen-compare-{rid}-{kid}",
                rng.choice(COMPARE_PHRASES).format(**values),
                expected=(rid, kid),
                kind="compare",
            )
        )
    for pid, children in _sample(rng, parents, per_kind):
        p = named[pid]
        text = rng.choice(HIERARCHY_PHRASES).format(src=LABEL[p["source"]], name=p["name"])
        questions.append(EvalQuestion(f"gen-hierarchy-{pid}", text, expected=tuple(children), kind="hierarchy"))
    questions += _gene_questions(driver, rng, sorted(named), per_kind)
    return questions


def _gene_questions(driver: Driver, rng: random.Random, pathway_ids: list[str], per_kind: int) -> list[EvalQuestion]:
    out: list[EvalQuestion] = []
    for pid in _sample(rng, pathway_ids, per_kind):
        symbols = [r["symbol"] for r in driver.execute_query(MEMBER_SYMBOLS, id=pid).records]
        if len(symbols) < 2:
            continue
        g1, g2 = rng.sample(symbols, 2)
        both = driver.execute_query(CONTAINING_BOTH, symbols=[g1, g2]).records[0]["ids"]
        out.append(
            EvalQuestion(
                f"gen-gene-pathways-{g1}-{g2}",
                rng.choice(GENE_PAIR_PHRASES).format(g1=g1, g2=g2),
                expected=tuple(sorted(both)),
                kind="gene_pathways",
            )
        )
        out.append(
            EvalQuestion(
                f"gen-gene-compare-{g1}-{g2}",
                rng.choice(GENE_COMPARE_PHRASES).format(g1=g1, g2=g2),
                expected=(g1, g2),
                kind="compare",
            )
        )
    return out


def _sample(rng: random.Random, items: list[T], k: int) -> list[T]:
    return rng.sample(items, min(k, len(items)))
