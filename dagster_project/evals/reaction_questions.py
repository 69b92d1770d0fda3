"""Generated reaction questions (the `_Builder` of kind_questions.py): a pathway's reactions (and pathways Flux
holds none for), a reaction's participants by role, the reactions of a gene or compound, walks downstream and
upstream. Sampled with the builder's seed from the reaction tables (reaction_truth.py); what a right answer holds
travels with each question and is graded by the kinds' own graders."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter
from typing import TYPE_CHECKING

from dagster_project.evals.reaction_truth import ReactionTruth

if TYPE_CHECKING:
    from dagster_project.evals.kind_questions import _Builder

ROLES = ("input", "output", "catalyst")
MAX_ORDER_PAIRS = 5
UNHELD_IDS = ("R-HSA-9999901", "R-HSA-9999917", "R-HSA-9999933")  # reaction-shaped ids no release has issued


def add_reaction_questions(b: _Builder, reactions: ReactionTruth, per_kind: int) -> None:
    if not reactions.names:
        return
    _pathways(b, reactions, per_kind)
    _participants(b, reactions, per_kind)
    _involvements(b, reactions, per_kind)
    _walks(b, reactions, per_kind)


def _below(b: _Builder, pid: str) -> set[str]:
    """The pathway and every pathway under it."""
    seen, todo = {pid}, [pid]
    while todo:
        for child in b.truth.children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _order_pairs(reactions: ReactionTruth, ids: set[str]) -> str:
    """Up to five PRECEDES pairs among `ids` an ordered answer must respect ('a>b|c>d'); none where they cycle."""
    steps = sorted((a, c) for a, c in reactions.steps if a in ids and c in ids)
    sorter: TopologicalSorter[str] = TopologicalSorter()
    for a, c in steps:
        sorter.add(c, a)
    try:
        sorter.prepare()
    except CycleError:
        return ""
    return "|".join(f"{a}>{c}" for a, c in steps[:MAX_ORDER_PAIRS])


def _pathways(b: _Builder, reactions: ReactionTruth, per_kind: int) -> None:
    held = {pid: reactions.of_pathways(_below(b, pid)) for pid in b.named}
    with_reactions = [pid for pid, ids in held.items() if ids]
    for pid in _pick(b, with_reactions, per_kind):
        ids = held[pid]
        b.add(
            "pathway_reactions",
            b.pathway(pid),
            (pid,),
            reactions="|".join(sorted(ids)),
            order=_order_pairs(reactions, ids),
        )
    for pid in _pick(b, with_reactions, per_kind // 2):
        ids = held[pid]
        b.add("pathway_reactions:count", b.pathway(pid), (pid,), reactions="|".join(sorted(ids)), count=str(len(ids)))
    without = [pid for pid, ids in held.items() if not ids and b.truth.pathways[pid].source == "reactome"]
    for pid in _pick(b, without, per_kind // 2):
        b.add("reaction_scope:pathway", b.pathway(pid), ())
    for rid in UNHELD_IDS:
        b.add("reaction_scope:id", {"rid": rid}, ())


def _pick(b: _Builder, items: list, k: int) -> list:
    return b.rng.sample(sorted(items), min(k, len(items)))


def _participants(b: _Builder, reactions: ReactionTruth, per_kind: int) -> None:
    ids = sorted(reactions.names)
    for rid in _pick(b, ids, per_kind // 2):
        roles = reactions.roles[rid]
        b.add(
            "reaction_participants:all",
            {"rid": rid, "rname": reactions.names[rid]},
            (rid,),
            **{f"{role}s": "|".join(sorted(roles[role])) for role in ("input", "output")},
        )
    for role in ROLES:
        having = [rid for rid in ids if reactions.roles[rid][role]]
        for rid in _pick(b, having, per_kind // 3):
            b.add(
                f"reaction_participants:{role}",
                {"rid": rid, "rname": reactions.names[rid]},
                (rid,),
                **{f"{role}s": "|".join(sorted(reactions.roles[rid][role]))},
            )


def _entities(b: _Builder, reactions: ReactionTruth) -> dict[str, str]:
    """Entities a question can name → how it names them: placed genes by symbol, compounds by their one name."""
    symbols = {g.hgnc_id: g.symbol for g in b.truth.genes.values() if len(g.symbol) >= 3}
    named = {e: symbols[e] for e in reactions.involved if e in symbols}
    return named | {c: n for c, n in reactions.named_compounds().items() if c in reactions.involved}


def _involvements(b: _Builder, reactions: ReactionTruth, per_kind: int) -> None:
    entities = _entities(b, reactions)
    for role in ("any", *ROLES):
        having = [e for e in entities if any(role in ("any", r) for _, r in reactions.involved[e])]
        for entity in _pick(b, having, per_kind // 4 if role != "any" else per_kind // 2):
            ids = {rid for rid, r in reactions.involved[entity] if role in ("any", r)}
            b.add(f"entity_reactions:{role}", {"entity": entities[entity]}, (entity,), reactions="|".join(sorted(ids)))
    for entity in _pick(b, list(entities), per_kind // 4):
        ids = {rid for rid, _ in reactions.involved[entity]}
        b.add(
            "entity_reactions:count",
            {"entity": entities[entity]},
            (entity,),
            reactions="|".join(sorted(ids)),
            count=str(len(ids)),
        )


def _walks(b: _Builder, reactions: ReactionTruth, per_kind: int) -> None:
    entities = _entities(b, reactions)
    starts = [(rid, rid, "reaction") for rid in sorted(reactions.names)]
    starts += [(e, name, "entity") for e, name in sorted(entities.items())]
    for direction in ("downstream", "upstream"):
        down = direction == "downstream"
        for start, asked, what in _pick(b, starts, per_kind // 2):
            if what == "reaction":
                first, hub = {start}, False
            else:
                first = {rid for rid, role in reactions.involved[start] if (role != "output") == down}
                hub = reactions.is_hub(start)
            if not first:
                continue
            reached = set() if hub else {n for r in first for n in reactions.next_reactions(r, down)} - first
            b.add(
                f"reaction_walk:{direction}",
                {"start": asked},
                (start,),
                direction=direction,
                hub="yes" if hub else "no",
                reached="|".join(sorted(reached)),
            )
