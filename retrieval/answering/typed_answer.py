"""Compose a graph answer from its facts: one claim per fact, each citing the node ids it comes from.

The result is a generator reply (JSON, the same schema an LLM returns) plus the graph evidence it cites, so it goes
through the same three-pass validation as any other answer. Long lists name the first `LIST_IN_PROSE` items and
say how many more; `data` always holds the whole list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from retrieval.answering.gene_facts_text import gene_fact_claims
from retrieval.model.answer_data import (
    AnswerData,
    ComparisonData,
    CompoundPathwaysData,
    CounterpartData,
    DifferenceData,
    GeneFactsData,
    GenePathwaysData,
    HierarchyData,
    Mapping,
    MembersData,
    NodeRef,
    NotFoundData,
    OverviewData,
    ReleaseChangesData,
    SharedGenesData,
)
from retrieval.model.types import Evidence

LIST_IN_PROSE = 60
SOURCE_LABEL = {"reactome": "Reactome", "kegg": "KEGG", "hgnc": "HGNC"}

Claim = tuple[str, list[str]]


def _listing(items: Sequence[str], limit: int = LIST_IN_PROSE) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} more"


def _name(node: NodeRef) -> str:
    if node.source == "hgnc":
        return f"{node.name} ({node.id})"
    label = SOURCE_LABEL.get(node.source, node.source)
    return f'{label} {node.id} "{node.name}"'.strip()


def _score_text(mapping: Mapping) -> str:
    parts = [f"{key} {value:.2f}" for key, value in (("confidence", mapping.confidence), ("Jaccard", mapping.jaccard),
                                                      ("overlap", mapping.overlap)) if value is not None]
    return f" ({', '.join(parts)})" if parts else ""


def _relation(subject: NodeRef, mapping: Mapping) -> str:
    verb = ("is equivalent to" if mapping.relation == "equivalent"
            else "lies within" if mapping.direction == "inside" else "contains")
    shared = mapping.shared_genes
    genes = f"; they share {len(shared)} genes: {_listing(shared, 20)}" if shared else ""
    return f"{_name(subject)} {verb} {_name(mapping.pathway)}{_score_text(mapping)}{genes}."


def _members(data: MembersData) -> list[Claim]:
    p = data.pathway
    claims = [(f"{_name(p)} has {len(data.compounds)} compounds: {_listing(data.compounds)}.", [p.id])
              ] if data.compounds else []
    if data.counterpart_of is not None:
        origin = data.counterpart_of
        claims.insert(0, (f"{_name(p)} is the closest counterpart of {_name(origin)} that the resolution found.",
                          [origin.id, p.id]))
    if data.asked_genes:
        return [*claims, *_membership(data)]
    if data.name_filter:
        listed = f": {_listing([g.symbol for g in data.genes])}" if data.genes else ""
        return [*claims, (f"Of the {data.total} member genes of {_name(p)}, {len(data.genes)} have "
                          f"'{data.name_filter}' in their name{listed}.", [p.id])]
    if not data.genes:
        return [*claims, (f"{_name(p)} has no member genes in the graph.", [p.id])]
    return [*claims, (f"{_name(p)} has {data.total} member genes: {_listing([g.symbol for g in data.genes])}.",
                      [p.id])]


def _membership(data: MembersData) -> list[Claim]:
    p, members = data.pathway, {g.id for g in data.genes}
    return [(f"{'Yes' if g.id in members else 'No'}: {g.symbol} is {'' if g.id in members else 'not '}one of the "
             f"{data.total} member genes of {_name(p)}.", [p.id]) for g in data.asked_genes]


def _gene_pathways(data: GenePathwaysData) -> list[Claim]:
    symbols = " and ".join(g.symbol for g in data.genes)
    both = "both " if len(data.genes) == 2 else "all of " if len(data.genes) > 2 else ""
    return _pathways_holding(f"{both}{symbols}", [g.id for g in data.genes], data.pathways, data.source, data.count)


def _compound_pathways(data: CompoundPathwaysData) -> list[Claim]:
    if not data.pathways:  # nothing to cite: the statement stands on its own (the pipeline keeps it uncited)
        where = SOURCE_LABEL.get(data.source, "the graph")
        return [(f"No pathway in {where} contains {' and '.join(data.compounds)}.", [])]
    return _pathways_holding(" and ".join(data.compounds), [p.id for p in data.pathways[:5]], data.pathways,
                             data.source, data.count)


def _pathways_holding(what: str, cited: list[str], pathways: list[NodeRef], source: str, count: bool
                      ) -> list[Claim]:
    label = f"{SOURCE_LABEL[source]} " if source in SOURCE_LABEL else ""
    if not pathways:
        return [(f"0 {label}pathways in the graph contain {what}." if count
                 else f"No {label}pathway in the graph contains {what}.", cited)]
    claims = [(f"{len(pathways)} {label}pathways contain {what}.", cited)] if count else []
    for db in ("kegg", "reactome"):
        mine = [f'{p.id} "{p.name}"' for p in pathways if p.source == db]
        if mine:
            claims.append((f"In {SOURCE_LABEL[db]}, {len(mine)} pathways contain {what} (smallest first): "
                           f"{_listing(mine, 25)}.", cited))
    return claims


def _counterpart(data: CounterpartData) -> list[Claim]:
    p = data.pathway
    if not data.counterparts:
        target = SOURCE_LABEL.get(data.target_source, "the other database")
        return [(f"No {target} pathway is resolved as equivalent to, or part of, {_name(p)}.", [p.id])]
    return [(_relation(p, m), [p.id, m.pathway.id]) for m in data.counterparts]


def _shared_genes(data: SharedGenesData) -> list[Claim]:
    if len(data.pathways) == 1:
        a = data.pathways[0]
        return [(f"{_name(a)} has no resolved counterpart in the other database to compare its genes with.",
                 [a.id])]
    a, b = data.pathways
    cited = [a.id, b.id]
    symbols = [g.symbol for g in data.shared]
    text = (f"{_name(a)} ({data.sizes[0]} genes) and {_name(b)} ({data.sizes[1]} genes) share {data.total} genes"
            + (f": {_listing(symbols)}." if symbols else "."))
    claims = [(text, cited)]
    if data.mapping is not None:
        mapping = data.mapping.model_copy(update={"shared_genes": []})
        claims.append((_relation(a, mapping), cited))
    return claims


def _hierarchy(data: HierarchyData) -> list[Claim]:
    p = data.pathway
    parents = [f'{n.id} "{n.name}"' for n in data.parents]
    children = [f'{n.id} "{n.name}"' for n in data.children]
    up = (f"{_name(p)} is part of {_listing(parents, 25)}." if parents
          else f"{_name(p)} is a top-level pathway (no parent pathway in the graph).")
    down = (f"{_name(p)} has {len(children)} sub-pathways: {_listing(children, 25)}." if children
            else f"{_name(p)} has no sub-pathways in the graph.")
    claims = {"up": [up], "down": [down], "both": [up, down]}[data.direction]
    return [(text, [p.id]) for text in claims]


def _difference(data: DifferenceData) -> list[Claim]:
    a, b = data.left, data.right
    symbols = [g.symbol for g in data.genes]
    text = (f"{_name(a)} has {data.sizes[0]} member genes; {data.total} of them are not in {_name(b)} "
            f"({data.sizes[1]} genes)" + (f": {_listing(symbols)}." if symbols else "."))
    return [(text, [a.id, b.id])]


def _overview(data: OverviewData) -> list[Claim]:
    p = data.pathway
    genes = [g.symbol for g in data.genes]
    size = (f"{_name(p)} has {data.gene_total} member genes in the graph"
            + (f" ({_listing(genes, 20)})" if genes else "")
            + (f" and {data.compound_total} compounds." if data.compound_total else "."))
    claims: list[Claim] = [(size, [p.id])]
    claims += _hierarchy(HierarchyData(pathway=p, parents=data.parents, children=data.children))
    for mapping in data.counterparts[:3]:
        claims.append((_relation(p, mapping.model_copy(update={"shared_genes": []})), [p.id, mapping.pathway.id]))
    if not data.counterparts:
        claims.append((f"No pathway of the other database is resolved as equivalent to, or part of, {_name(p)}.",
                       [p.id]))
    return claims


def _gene_facts(data: GeneFactsData) -> list[Claim]:
    return gene_fact_claims(data)


def _not_found(data: NotFoundData) -> list[Claim]:
    what = {"identifier": "identifier", "gene": "gene", "compound": "compound"}.get(data.what, "pathway")
    asked = f" '{data.asked}'" if data.asked else ""
    head = f"The index holds no {what}{asked}, so Flux does not answer this about another one."
    if not data.closest:
        return [(head, [])]
    names = ", ".join(f'{SOURCE_LABEL.get(n.source, n.source)} {n.id} "{n.name}"' for n in data.closest)
    return [(head, []), (f"The closest names it holds: {names}.", [n.id for n in data.closest])]


def _compare(data: ComparisonData) -> list[Claim]:
    left, right = data.left, data.right
    cited = [left.id, right.id]
    what = "genes" if data.subject == "pathways" else "pathways"
    claims = [(f"{_name(left)} and {_name(right)} share {len(data.shared)} {what}"
               + (f": {_listing(data.shared, 30)}." if data.shared else "."), cited),
              (f"Only in {_name(left)}: {len(data.only_left)} {what}"
               + (f" ({_listing(data.only_left, 30)})." if data.only_left else "."), [left.id]),
              (f"Only in {_name(right)}: {len(data.only_right)} {what}"
               + (f" ({_listing(data.only_right, 30)})." if data.only_right else "."), [right.id])]
    if data.mapping is not None:
        claims.append((_relation(left, data.mapping.model_copy(update={"shared_genes": []})), cited))
    return claims


def _release_changes(data: ReleaseChangesData) -> list[Claim]:
    name, cited = _name(data.pathway), [data.pathway.id]
    if data.change == "no_previous":
        return [(f"{name} comes from release {data.release}; no earlier release of "
                 f"{SOURCE_LABEL.get(data.pathway.source, data.pathway.source)} is kept to compare it with.", cited)]
    if data.change == "added":
        return [(f"{name} is new in release {data.release}: release {data.previous_release} did not have it.",
                 cited)]
    if data.change == "unchanged":
        return [(f"{name} has the same name and gene members in release {data.release} as in release "
                 f"{data.previous_release}.", cited)]
    claims = []
    if data.gained or data.lost:
        moved = [f"gained {len(data.gained)} genes ({_listing(data.gained, 30)})" if data.gained else "",
                 f"lost {len(data.lost)} genes ({_listing(data.lost, 30)})" if data.lost else ""]
        claims.append((f"From release {data.previous_release} to release {data.release}, {name} "
                       f"{' and '.join(m for m in moved if m)}.", cited))
    if data.renamed_from:
        claims.append((f"Its name changed: it was \"{data.renamed_from}\" in release {data.previous_release}.",
                       cited))
    if data.genes_renamed:
        claims.append((f"{data.genes_renamed} of its member symbols were renamed by HGNC and count as the same "
                       "genes, neither gained nor lost.", cited))
    return claims


COMPOSERS = {"members": _members, "gene_pathways": _gene_pathways, "counterpart": _counterpart,
             "shared_genes": _shared_genes, "hierarchy": _hierarchy, "compare": _compare,
             "compound_pathways": _compound_pathways, "difference": _difference, "overview": _overview,
             "gene_facts": _gene_facts, "release_changes": _release_changes, "not_found": _not_found}


def claims_for(data: AnswerData) -> list[Claim]:
    return COMPOSERS[data.kind](data)  # type: ignore[operator]


def evidence_for(claims: list[Claim], data: AnswerData) -> list[Evidence]:
    """One graph evidence item per cited node, holding every fact that cites it."""
    texts: dict[str, list[str]] = {}
    for text, cited in claims:
        for node_id in cited:
            texts.setdefault(node_id, []).append(text)
    return [Evidence(id=node_id, kind="graph", text=" ".join(facts), source=_source_of(node_id),
                     score=1.0, scores={"graph_fact": 1.0}, query=data.kind) for node_id, facts in texts.items()]


def _source_of(node_id: str) -> str:
    return "hgnc" if node_id.startswith("HGNC:") else "reactome" if node_id.startswith("R-") else "kegg"


def compose(data: AnswerData) -> tuple[str, list[Evidence]]:
    """The generator reply (JSON) for these facts and the evidence its claims cite."""
    claims = claims_for(data)
    answer = " ".join(text for text, _ in claims)
    if isinstance(data, ComparisonData):
        answer = f"{answer}\n\n{data.table}"
    # A statement with nothing to cite ("the index holds no pathway X") stays in the prose, not among the claims.
    reply = {"answer": answer, "claims": [{"text": t, "citations": c} for t, c in claims if c],
             "citations": list(dict.fromkeys(i for _, c in claims for i in c)), "confidence": 0.95,
             "reasoning_summary": f"Composed from graph facts ({data.kind}); every claim cites the nodes it reads."}
    return json.dumps(reply), evidence_for(claims, data)


def cited_releases(dataset_version: str, evidence: list[Evidence]) -> dict[str, str]:
    """source → release, for the sources of the cited facts (an index's dataset version names each source's
    served release: `hgnc=…;kegg=…`)."""
    served = dict(part.split("=", 1) for part in dataset_version.split(";") if "=" in part)
    return {source: served[source] for source in sorted({e.source for e in evidence}) if source in served}


def release_note(releases: dict[str, str]) -> str:
    return "Releases: " + "; ".join(f"{SOURCE_LABEL.get(s, s)} {r}" for s, r in releases.items()) + "."
