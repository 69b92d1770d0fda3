"""Generated questions for every typed kind, in many phrasings, with what a right answer must hold.

Entities are sampled with a fixed seed from what the index holds (kind_truth.py), never picked to pass. Each kind
has at least 15 phrasings; a share of questions is lower-cased, has a typo in its longest word, British spelling
or no "pathway" word. "Not in the index" questions name real non-human KEGG maps (plants, bacteria), other
species' ids, made-up genes and ids, and scrambled names. The expected answer (kind, ids, gene sets, numbers,
HGNC values) is stored with each question and graded by kind_grading.py.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

from dagster_project.core.vocabulary import COMMON_WORDS
from dagster_project.evals.condition_questions import add_condition_questions
from dagster_project.evals.kind_phrasings import NOT_IN_INDEX_MAPS, PHRASINGS
from dagster_project.evals.kind_truth import GeneTruth, Truth
from dagster_project.evals.questions import EvalQuestion
from dagster_project.evals.reaction_questions import add_reaction_questions
from dagster_project.evals.shared_pairs import RowPairs, SharedPairs
from retrieval.model.spelling import fold

SEED = 23
PER_KIND = 26
NOT_FOUND_QUESTIONS = 60
LABEL = {"reactome": "Reactome", "kegg": "KEGG"}
_BRITISH = (("signaling", "signalling"), ("tumor", "tumour"), ("Signaling", "Signalling"))


def _pick(rng: random.Random, items: Sequence, k: int) -> list:
    return rng.sample(items, min(k, len(items)))


def _typo(rng: random.Random, question: str) -> str:
    """Swap two inner letters of the longest alphabetic word of at least 8 letters."""
    words = [w for w in re.findall(r"[A-Za-z]+", question) if len(w) >= 8]
    if not words:
        return question
    word = max(words, key=len)
    i = rng.randrange(2, len(word) - 3)
    return question.replace(word, word[:i] + word[i + 1] + word[i] + word[i + 2 :], 1)


def _vary(rng: random.Random, question: str, style: str) -> str:
    if style == "lower":
        return question.lower()
    if style == "typo":
        return _typo(rng, question)
    if style == "british":
        for us, gb in _BRITISH:
            question = question.replace(us, gb)
        return question
    if style == "no_pathway":
        return re.sub(r"\s+pathway\b", "", question)
    return question


STYLES = ("plain", "plain", "plain", "lower", "typo", "british", "no_pathway")


class _Builder:
    def __init__(self, truth: Truth, seed: int) -> None:
        self.truth, self.rng = truth, random.Random(seed)
        names = Counter(fold(p.name) for p in truth.pathways.values())
        # Asked about by name only where the name is unique, so each question has one reading.
        self.named = sorted(p.id for p in truth.pathways.values() if p.name and names[fold(p.name)] == 1)
        self.out: list[EvalQuestion] = []
        self.phrasing_used: Counter[str] = Counter()

    def add(self, kind: str, values: dict[str, str], expected: tuple[str, ...] = (), **extra: str) -> None:
        phrasings = PHRASINGS[kind]
        n = self.phrasing_used[kind]
        self.phrasing_used[kind] += 1
        template = phrasings[n % len(phrasings)]  # every phrasing used before any repeats
        style = self.rng.choice(STYLES)
        if style == "typo" and not values.get("name"):
            style = "plain"  # typos go into pathway names, where a reader has names to correct them against
        question = template.format(**values)
        if style == "typo":
            question = question.replace(values["name"], _typo(self.rng, values["name"]), 1)
        else:
            question = _vary(self.rng, question, style)
        grade_kind = kind.split(":")[0]
        self.out.append(
            EvalQuestion(
                f"kinds-{kind}-{len(self.out):03d}",
                question,
                expected=(),
                kind="kinds",
                extra={"kind": grade_kind, "phrasing": kind, "style": style, "expected": "|".join(expected), **extra},
            )
        )

    def pathway(self, pid: str) -> dict[str, str]:
        p = self.truth.pathways[pid]
        return {"src": LABEL.get(p.source, p.source), "name": p.name, "id": pid}


def generate(truth: Truth, per_kind: int = PER_KIND, seed: int = SEED) -> list[EvalQuestion]:
    b = _Builder(truth, seed)
    _pathway_kinds(b, per_kind)
    _gene_kinds(b, per_kind)
    _pair_kinds(b, per_kind)
    _compound_kinds(b, per_kind)
    _not_found(b)
    _check_kinds(b, per_kind)
    _connection_kinds(b, per_kind)
    if b.truth.reactions is not None:
        add_reaction_questions(b, b.truth.reactions, per_kind)
    if b.truth.conditions is not None:
        add_condition_questions(b, b.truth.conditions, per_kind)
    _denied_checks(b, per_kind)
    return b.out


def _pathway_kinds(b: _Builder, per_kind: int) -> None:
    with_genes = [pid for pid in b.named if len(b.truth.pathways[pid].genes) >= 2]
    genes_of = {pid: "|".join(sorted(b.truth.pathways[pid].genes)) for pid in with_genes}
    for pid in _pick(b.rng, with_genes, per_kind):
        b.add("members", b.pathway(pid), (pid,), genes=genes_of[pid])
    for pid in _pick(b.rng, with_genes, per_kind):
        b.add("members:count", b.pathway(pid), (pid,), count=str(len(b.truth.pathways[pid].genes)), genes=genes_of[pid])
    for pid in _pick(b.rng, with_genes, per_kind):
        b.add("overview", b.pathway(pid), (pid,), gene_total=str(len(b.truth.pathways[pid].genes)))
    with_parents = [pid for pid in b.named if b.truth.parents.get(pid)]
    for pid in _pick(b.rng, with_parents, per_kind):
        b.add("hierarchy:up", b.pathway(pid), tuple(sorted(b.truth.parents[pid])), direction="up")
    with_children = [pid for pid in b.named if b.truth.children.get(pid)]
    for pid in _pick(b.rng, with_children, per_kind):
        b.add("hierarchy:down", b.pathway(pid), tuple(sorted(b.truth.children[pid])), direction="down")
    for pid in _pick(b.rng, with_children, per_kind // 2):
        b.add(
            "hierarchy:count",
            b.pathway(pid),
            tuple(sorted(b.truth.children[pid])),
            direction="down",
            count=str(len(b.truth.children[pid])),
        )


def _gene_kinds(b: _Builder, per_kind: int) -> None:
    # Symbols that are also common words (BAD, SET) or one or two letters are not asked about: a reader cannot tell
    # them from the words of the question.
    in_graph = sorted(
        {
            s
            for p in b.truth.pathways.values()
            for s in p.genes
            if s in b.truth.genes and len(s) >= 3 and s.upper() not in COMMON_WORDS
        }
    )
    for symbol in _pick(b.rng, in_graph, per_kind):
        b.add("gene_pathways", {"gene": symbol}, tuple(sorted(b.truth.pathways_with_genes({symbol}))))
    for symbol in _pick(b.rng, in_graph, per_kind):
        source = b.rng.choice(["kegg", "reactome"])
        ids = b.truth.pathways_with_genes({symbol}, source)
        b.add(
            "gene_pathways:count",
            {"gene": symbol, "src": LABEL[source]},
            tuple(sorted(ids)),
            count=str(len(ids)),
            source=source,
        )
    genes = [b.truth.genes[s] for s in in_graph]
    aliased = [
        g for g in genes if g.aliases and all(len(a) >= 3 and a.upper() not in b.truth.genes for a in g.aliases[:1])
    ]
    for g in _pick(b.rng, aliased, per_kind):
        owners = b.truth.alias_owners(g.aliases[0])
        b.add(
            "gene_facts:symbol",
            {"alias": g.aliases[0]},
            tuple(sorted(owners)),
            fact="symbol",
            hgnc_values="|".join(sorted(owners)),
        )
    for g in _pick(b.rng, [g for g in genes if g.ensembl_id], per_kind // 2):
        b.add(
            "gene_facts:ensembl",
            {"ensembl": g.ensembl_id},
            (g.symbol,),
            fact="symbol",
            hgnc_values=hgnc_values("symbol", g),
        )
    for fact in ("ids", "locus_type", "location"):
        for g in _pick(b.rng, genes, per_kind):
            b.add(f"gene_facts:{fact}", {"gene": g.symbol}, (g.symbol,), fact=fact, hgnc_values=hgnc_values(fact, g))


def hgnc_values(fact: str, row: GeneTruth) -> str:
    """What a right answer must state, read from the HGNC table itself ('|'-joined)."""
    if fact == "symbol":
        values = [row.symbol]
    elif fact == "ids":
        values = [v for v in (row.entrez_id, row.ensembl_id, *row.uniprot_ids[:1]) if v]
    elif fact == "locus_type":
        coding = row.locus_type == "gene with protein product"
        values = [("Yes" if coding else "No") if row.locus_type else "no locus type"]
    elif fact == "location":
        values = [row.location or "no chromosome location"]
    else:
        values = [row.name]
    return "|".join(values)


def _pair_kinds(b: _Builder, per_kind: int) -> None:
    pairs = [(r, k) for r, k in b.truth.equivalents if r in b.named and k in b.named]
    for rid, kid in _pick(b.rng, pairs, per_kind):
        source, target = b.rng.choice([(rid, kid), (kid, rid)])
        values = {**b.pathway(source), "dst": LABEL[b.truth.pathways[target].source]}
        b.add("counterpart", values, (target,))
    for rid, kid in _pick(b.rng, pairs, per_kind):
        a, c = b.truth.pathways[kid], b.truth.pathways[rid]
        values = {"src_a": "KEGG", "a": a.name, "src_b": "Reactome", "b": c.name}
        b.add("shared_genes", values, tuple(sorted(a.genes & c.genes)))
    nested = [
        (child, parent)
        for child, parents in b.truth.parents.items()
        for parent in parents
        if child in b.named and parent in b.named
    ]
    candidates = pairs + [(p, c) for c, p in nested]
    for left, right in _pick(b.rng, candidates, per_kind):
        a, c = b.truth.pathways[left], b.truth.pathways[right]
        values = {"src_a": LABEL[a.source], "a": a.name, "src_b": LABEL[c.source], "b": c.name}
        b.add("difference", values, tuple(sorted(a.genes - c.genes)), left=left, right=right)
    for rid, kid in _pick(b.rng, pairs, per_kind // 2):
        a, c = b.truth.pathways[rid], b.truth.pathways[kid]
        b.add("compare", {"src_a": "Reactome", "a": a.name, "src_b": "KEGG", "b": c.name}, (rid, kid))


def _compound_kinds(b: _Builder, per_kind: int) -> None:
    compounds = sorted({c for p in b.truth.pathways.values() for c in p.compounds})
    for compound in _pick(b.rng, compounds, per_kind):
        ids = b.truth.pathways_with_compounds({compound})
        b.add("compound_pathways", {"compound": compound}, tuple(sorted(ids)))
    for compound in _pick(b.rng, compounds, per_kind // 2):
        ids = b.truth.pathways_with_compounds({compound})
        b.add("compound_pathways:count", {"compound": compound}, tuple(sorted(ids)), count=str(len(ids)))


def _scramble(rng: random.Random, name: str) -> str:
    """A name too far from any: its words' letters shuffled inside each word."""

    def shuffle(word: str) -> str:
        letters = list(word)
        rng.shuffle(letters)
        return "".join(letters)

    return " ".join(shuffle(w) if len(w) > 3 else w for w in name.split())


def _not_found(b: _Builder) -> None:
    held = {fold(p.name) for p in b.truth.pathways.values()}
    maps = [(pid, name) for pid, name in NOT_IN_INDEX_MAPS if fold(name) not in held]
    templates = [k for k in PHRASINGS if k.startswith("not_found:")]
    for n in range(NOT_FOUND_QUESTIONS):
        pid, name = maps[n % len(maps)]
        form = templates[n % len(templates)]
        real = b.truth.pathways[b.rng.choice(b.named)].name
        values = {
            "name": name,
            "map_id": pid,
            "species_id": f"R-MMU-{b.rng.randrange(10**5, 10**7)}",
            "gene": f"ZQX{b.rng.randrange(10, 99)}",
            "ensembl": f"ENSG{b.rng.randrange(9 * 10**10, 10**11):011d}",
            "scrambled": _scramble(b.rng, real),
        }
        b.add(form, values, (), absent="true")


def _apart(b: _Builder, above: dict[str, set[str]]) -> RowPairs:
    """(x, y) of one database, neither under the other, listed as `for x in named for y in named` would (on the
    snapshot some 6 million pairs: counted per row, built only for the rows sampled)."""
    below: dict[str, set[str]] = {pid: set() for pid in b.named}
    for pid, ancestors in above.items():
        for ancestor in ancestors:
            if ancestor in below:
                below[ancestor].add(pid)
    source = {pid: b.truth.pathways[pid].source for pid in b.named}
    same = Counter(source.values())

    def related(x: str) -> set[str]:
        return {y for y in above[x] | below[x] if y in source and source[y] == source[x]} | {x}

    def count(i: int) -> int:
        x = b.named[i]
        return same[source[x]] - len(related(x))

    def partners(i: int) -> list[str]:
        x = b.named[i]
        excluded = related(x)
        return [y for y in b.named if source[y] == source[x] and y not in excluded]

    return RowPairs(b.named, count, partners)


def _check_kinds(b: _Builder, per_kind: int) -> None:
    """Yes/no questions: a pathway under another at any depth (and one that is not), a gene in a pathway (and one
    that is not)."""
    _yes_no_checks(b, pairs=per_kind // 2, memberships=per_kind)


def _denied_checks(b: _Builder, per_kind: int) -> None:
    """A quarter as many of each yes/no question as a statement that denies the relation, graded on "True" /
    "False" (generated last, so every other question stays the one the same seed gave before)."""
    _yes_no_checks(b, pairs=per_kind // 4, memberships=per_kind // 4, suffix="_denied", negated="yes")


def _yes_no_checks(b: _Builder, pairs: int, memberships: int, suffix: str = "", **extra: str) -> None:
    above = {pid: b.truth.ancestors(pid) for pid in b.named}
    named = set(b.named)
    under = [(child, top) for child in b.named for top in sorted(above[child]) if top in named]
    for child, top in _pick(b.rng, under, pairs):
        b.add(f"check:part_of{suffix}", _pair(b, child, top), (), subject=child, object=top, verdict="yes", **extra)
    for x, y in _pick(b.rng, _apart(b, above), pairs):
        b.add(f"check:part_of{suffix}", _pair(b, x, y), (), subject=x, object=y, verdict="no", **extra)
    genes = sorted(s for s in b.truth.genes if len(s) >= 3 and s.upper() not in COMMON_WORDS)
    with_genes = [pid for pid in b.named if b.truth.pathways[pid].genes]
    for pid in _pick(b.rng, with_genes, memberships):
        members = sorted(b.truth.pathways[pid].genes & set(genes))
        outside = sorted(set(genes) - b.truth.pathways[pid].genes)
        held = b.rng.random() < 0.5 and members
        symbol = b.rng.choice(members if held else outside)
        b.add(
            f"check:member{suffix}",
            {**b.pathway(pid), "gene": symbol},
            (),
            subject=b.truth.genes[symbol].hgnc_id,
            object=pid,
            verdict="yes" if held else "no",
            **extra,
        )


def _pair(b: _Builder, a: str, c: str) -> dict[str, str]:
    x, y = b.truth.pathways[a], b.truth.pathways[c]
    return {"src_a": LABEL[x.source], "a": x.name, "src_b": LABEL[y.source], "b": y.name}


def _connection_kinds(b: _Builder, per_kind: int) -> None:
    """What connects two pathways sharing genes (their shared genes), or two genes sharing pathways."""
    pairs = SharedPairs(b.named, {pid: b.truth.pathways[pid].genes for pid in b.named})
    for x, y in _pick(b.rng, pairs, per_kind):
        shared = sorted(b.truth.pathways[x].genes & b.truth.pathways[y].genes)
        b.add("connection", _pair(b, x, y), (), between=f"{x}|{y}", shared="|".join(shared))
    pathways_of: dict[str, set[str]] = {}
    for pathway in b.truth.pathways.values():
        for symbol in pathway.genes:
            pathways_of.setdefault(symbol, set()).add(pathway.id)
    genes = sorted(s for s in b.truth.genes if len(s) >= 3 and s.upper() not in COMMON_WORDS and s in pathways_of)
    gene_pairs = SharedPairs(genes, pathways_of)
    for g, h in _pick(b.rng, gene_pairs, per_kind // 2):
        shared = sorted(b.truth.pathways_with_genes({g, h}))
        b.add(
            "connection:genes",
            {"gene_a": g, "gene_b": h},
            (),
            between=f"{b.truth.genes[g].hgnc_id}|{b.truth.genes[h].hgnc_id}",
            shared="|".join(shared),
        )
