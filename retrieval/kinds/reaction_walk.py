"""`reaction_walk`: what sits downstream (or upstream) of a gene, compound or reaction — `X precedes ? returns
reaction` (`? precedes X` upstream) — a breadth-first walk of at most `depth` steps along outputs → inputs (a
reaction's output that another consumes) and PRECEDES edges, each step cited with what links it.

A walk does not pass through hubs (ATP, H2O, NAD+, ubiquitin and anything in more than `HUB_REACTIONS` reactions):
through them everything is downstream of everything. A walk from a hub stops at the hub's own reactions, and the
answer says so."""

from __future__ import annotations

from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, expected_set, table
from retrieval.kinds.reaction_participants import reaction_label
from retrieval.kinds.reaction_scope import not_held
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.plan import Entity, Plan
from retrieval.model.reaction_data import ReactionRef, ReactionScopeData, ReactionWalkData, WalkStep
from retrieval.model.refs import NodeRef
from retrieval.question.reaction_questions import (
    MAX_WALK_DEPTH,
    direction,
    participant_entities,
    reaction_entities,
    written,
)
from retrieval.question.reading import EXPLAINS, Read, pathway_entity
from retrieval.retrievers.reaction_facts import HUB_REACTIONS, HUBS, ReactionReader

MAX_REACHED = 30  # reactions a walk lists; past this it stops and says so


def recognise(read: Read) -> Plan | None:
    question = written(read)
    way = direction(question)
    if way is None or EXPLAINS.search(question):
        return None
    start = (reaction_entities(read) or participant_entities(read))[:1]
    if not start:
        return None
    # "In Glycolysis, what precedes R-HSA-71660?": the walk stays inside that pathway (and its sub-pathways).
    within = [pathway_entity(p) for p in read.found[:1]]
    downstream = way == "downstream"
    return Plan(
        kind="reaction_walk",
        operation="list",
        relation="precedes",
        subjects=start + within if downstream else within,
        objects=within if downstream else start,
        returns="reaction",
        depth=MAX_WALK_DEPTH,
        reason=f"{way} of {start[0].label()}",
    )


def accepts(plan: Plan) -> bool:
    return (
        plan.operation == "list"
        and plan.relation == "precedes"
        and plan.returns == "reaction"
        and len([e for e in plan.entities if e.type != "pathway"]) == 1
    )


def start_of(plan: Plan) -> tuple[Entity, bool]:
    """The entity the walk starts from, and whether it walks downstream (the start is a subject)."""
    start = next(e for e in plan.entities if e.type != "pathway")
    return start, start in plan.subjects


def _first(reader: ReactionReader, start: Entity, downstream: bool) -> tuple[list[ReactionRef], bool] | None:
    """Where the walk starts, and whether the start is a hub; None: Flux holds nothing to start from."""
    if start.type == "reaction":
        reaction = reader.reaction(start.id)
        return ([reaction], False) if reaction else None
    found = reader.entity(start.id)
    if found is None:
        return None
    involvements = reader.involvements(start.id)
    # Downstream of what a gene or compound acts in; upstream of what makes it. An enzyme no reaction makes walks
    # up from the reactions it catalyses, a compound no reaction consumes down from those that make it.
    involved = [i for i in involvements if (i.role != "output") == downstream] or involvements
    first = list({i.reaction.id: i.reaction for i in involved}.values())
    return first, start.id in HUBS or found[1] > HUB_REACTIONS


def walk(
    reader: ReactionReader, first: list[ReactionRef], way: str, max_depth: int
) -> tuple[list[WalkStep], list[NodeRef], bool]:
    """Breadth first from `first`: each reaction reached once, by its first step; hubs skipped; capped."""
    seen = {r.id for r in first}
    frontier = sorted(seen)
    steps: list[WalkStep] = []
    hubs: dict[str, NodeRef] = {}
    for depth in range(1, max_depth + 1):
        if not frontier:
            break
        found, skipped = reader.step(frontier, way, depth)
        hubs.update((h.id, h) for h in skipped)
        frontier = []
        for step in found:
            if step.target.id in seen:
                continue
            if len(seen) - len(first) >= MAX_REACHED:
                return steps, sorted(hubs.values(), key=lambda h: h.id), True
            seen.add(step.target.id)
            steps.append(step)
            frontier.append(step.target.id)
    return steps, sorted(hubs.values(), key=lambda h: h.id), False


def keep_inside(steps: list[WalkStep], inside: set[str]) -> list[WalkStep]:
    """The steps that stay among a pathway's reactions, each reached from the start through kept steps."""
    kept: list[WalkStep] = []
    reached: set[str] = set()
    for step in sorted(steps, key=lambda s: s.depth):
        if step.target.id in inside and (step.depth == 1 or step.source.id in reached):
            kept.append(step)
            reached.add(step.target.id)
    return kept


def facts(plan: Plan, stores: Stores) -> ReactionWalkData | ReactionScopeData:
    reader = ReactionReader(stores.graph)
    start, downstream = start_of(plan)
    begun = _first(reader, start, downstream)
    if begun is None or not begun[0]:
        return not_held(reader, f"{start.label()} (Flux holds no reaction it takes part in)")
    first, is_hub = begun
    way = "downstream" if downstream else "upstream"
    steps, hubs, truncated = ([], [], False) if is_hub else walk(reader, first, way, plan.depth or MAX_WALK_DEPTH)
    pathway = next((e for e in plan.entities if e.type == "pathway"), None)
    if pathway is not None:
        inside = {r.id for r in reader.pathway_reactions(pathway.id)[0]}
        steps = keep_inside(steps, inside)
    return ReactionWalkData(
        start=NodeRef(id=start.id, name=start.name, source=start.source),
        start_kind=start.type,
        direction=way,
        first=first,
        steps=steps,  # type: ignore[arg-type]
        max_depth=plan.depth or MAX_WALK_DEPTH,
        hubs_skipped=hubs,
        start_is_hub=is_hub,
        truncated=truncated,
    )


def _link(step: WalkStep, downstream: bool) -> str:
    if step.through is None:
        return (
            f"{reaction_label(step.target)} follows {reaction_label(step.source)} (PRECEDES)"
            if downstream
            else f"{reaction_label(step.target)} precedes {reaction_label(step.source)} (PRECEDES)"
        )
    what = f"{step.through.name or step.through.id} [{step.through.id}]"
    return (
        f"{reaction_label(step.source)} produces {what}, which {reaction_label(step.target)} consumes"
        if downstream
        else f"{reaction_label(step.target)} produces {what}, which {reaction_label(step.source)} consumes"
    )


def statements(data: ReactionWalkData) -> list[Statement]:
    s = data.start
    who = f"{s.name} ({s.id})" if s.name and s.name != s.id else s.id
    downstream = data.direction == "downstream"
    out: list[Statement] = []
    if data.start_kind != "reaction":
        verb = "takes part in" if downstream else "comes out of"
        listed = listing([reaction_label(r) for r in data.first], 20)
        out.append((f"{who} {verb} {len(data.first)} reactions: {listed}.", [s.id, *(r.id for r in data.first[:20])]))
    if data.start_is_hub:
        out.append(
            (
                f"{who} takes part in so many reactions that a walk through it reaches nearly everything, so "
                f"Flux does not walk {data.direction} from it beyond its own reactions.",
                [s.id],
            )
        )
        return out
    if not data.steps:
        out.append((f"Flux holds nothing {data.direction} of {who} within {data.max_depth} steps.", [s.id]))
    for depth in range(1, data.max_depth + 1):
        at = [st for st in data.steps if st.depth == depth]
        for step in at:
            cites = [step.source.id, step.target.id, *([step.through.id] if step.through else [])]
            out.append((f"Step {depth} {data.direction}: {_link(step, downstream)}.", cites))
    if data.truncated:
        out.append((f"The walk stopped after {len(data.steps)} reactions; more lie {data.direction}.", [s.id]))
    if data.hubs_skipped:
        out.append(
            (
                f"The walk does not pass through {listing([h.name or h.id for h in data.hubs_skipped], 12)}, "
                "which take part in too many reactions to say what follows from what.",
                [],
            )
        )
    return out


def data_table(data: ReactionWalkData) -> DataTable:
    return table(
        f"{data.direction.capitalize()} of {data.start.name or data.start.id} ({len(data.steps)} reactions)",
        ["step", "from", "to", "to name", "through"],
        [
            [st.depth, st.source.id, st.target.id, st.target.name, st.through.id if st.through else "PRECEDES"]
            for st in data.steps
        ],
        of="reaction",
    )


def refers_to(data: ReactionWalkData) -> Referents:
    return Referents(genes=[data.start.name] if data.start_kind == "gene" else [])


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The start and direction asked, and every reaction expected reached (a walk may reach more than listed)."""
    data = answer.data
    return (
        isinstance(data, ReactionWalkData)
        and data.start.id in expected_set(expected)
        and data.direction == expected.get("direction")
        and data.start_is_hub == (expected.get("hub") == "yes")
        and expected_set(expected, "reached") <= {st.target.id for st in data.steps}
    )


KIND = QuestionKind(
    name="reaction_walk",
    recognisers=((29, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
