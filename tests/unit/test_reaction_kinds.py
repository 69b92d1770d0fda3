"""Reaction questions, pure logic: which reaction kind a question is read as (a pathway's reactions, a reaction's
participants, the reactions of a gene or compound, a walk downstream or upstream, or "Flux holds reactions for N
pathways; not for X"), PRECEDES order, the walk's breadth-first bound and hub cap, and the statements each answer
makes (every step cited)."""

from __future__ import annotations

import pytest

from retrieval.kinds import reaction_walk
from retrieval.kinds.pathway_reactions import in_order
from retrieval.kinds.registry import compose_answer
from retrieval.model.answer_data import NodeRef
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.reaction_data import (
    EntityReactionsData,
    Involvement,
    Participant,
    ReactionParticipantsData,
    ReactionRef,
    ReactionScopeData,
    ReactionWalkData,
    WalkStep,
)
from retrieval.model.reactions import Named, ReactionLexicon
from tests.support.plans import read

REACTIONS = ReactionLexicon(
    reactions={
        i: Named(i, n)
        for i, n in [
            ("R-HSA-70420", "HK1,2,3,GCK,HKDC1 phosphorylate Glc to form G6P"),
            ("R-HSA-70471", "GPI dimer isomerizes G6P to Fru(6)P"),
            ("R-HSA-70467", "PFKM tetramer phosphorylates Fru(6)P to Fru(1,6)P2"),
            ("R-HSA-170824", "glucokinase (GCK1) + glucokinase regulatory protein (GKRP) <=> GCK1:GKRP complex"),
        ]
    },
    compounds={
        i: Named(i, n)
        for i, n in [
            ("CHEBI:30616", "ATP"),
            ("CHEBI:4170", "G6P"),
            ("CHEBI:15377", "H2O"),
            ("CHEBI:15361", "PYR"),
            ("CHEBI:43474", "Pi"),
        ]
    },
)
PATHWAYS = PathwayLexicon(
    [
        ("R-HSA-70171", "reactome", "Glycolysis"),
        ("hsa00010", "kegg", "Glycolysis / Gluconeogenesis"),
        ("R-HSA-109581", "reactome", "Apoptosis"),
    ],
    REACTIONS,
)
GENES = GeneLexicon(
    [
        ("HGNC:4195", "GCK", "glucokinase", ["HK4", "MODY2"], []),
        ("HGNC:4922", "HK1", "hexokinase 1", [], []),
        ("HGNC:11998", "TP53", "tumor protein p53", [], []),
    ]
)


@pytest.mark.parametrize(
    ("question", "kind", "detail"),
    [
        ("Which reactions does glycolysis include?", "pathway_reactions", "R-HSA-70171"),
        ("How many reactions are in Reactome's Glycolysis?", "pathway_reactions", "R-HSA-70171"),
        ("list the reactions of glycolysis in order", "pathway_reactions", "R-HSA-70171"),
        ("Which reactions does Apoptosis include?", "pathway_reactions", "R-HSA-109581"),  # facts say not held
        ("What does R-HSA-70420 consume?", "reaction_participants", "input"),
        ("What are the inputs and outputs of reaction R-HSA-70467?", "reaction_participants", None),
        ("What catalyses R-HSA-70471?", "reaction_participants", "catalyst"),
        ("what does the reaction 'GPI dimer isomerizes G6P to Fru(6)P' produce", "reaction_participants", "output"),
        ("Which reactions produce G6P?", "entity_reactions", "output"),
        ("Which reactions consume ATP?", "entity_reactions", "input"),
        ("Which reactions involve GCK?", "entity_reactions", None),
        ("In which reactions does CHEBI:15361 take part?", "entity_reactions", None),
        ("How many glycolysis reactions use ATP?", "entity_reactions", "input"),
        ("What is downstream of GCK?", "reaction_walk", "downstream"),
        ("What happens after R-HSA-70420?", "reaction_walk", "downstream"),
        ("What lies upstream of G6P?", "reaction_walk", "upstream"),
        ("Which reactions precede R-HSA-70467?", "reaction_walk", "upstream"),
        ("What sits downstream of ATP?", "reaction_walk", "downstream"),
        ("What does R-HSA-99999 consume?", "reaction_scope", "R-HSA-99999"),
        ("Which reactions does TP53 take part in?", "entity_reactions", None),  # facts say Flux holds none
        ("What is the rate-limiting step of the urea cycle?", "reaction_scope", None),
    ],
)
def test_reaction_questions_are_read_as_their_kind(question: str, kind: str, detail: str | None) -> None:
    plan = read(question, GENES, PATHWAYS)
    assert plan.kind == kind, (question, plan.explain())
    if kind == "pathway_reactions":
        assert plan.objects[0].id == detail and plan.returns == "reaction"
        assert plan.count == question.lower().startswith("how many")
    elif kind in ("reaction_participants", "entity_reactions"):
        assert plan.role == detail, plan.explain()
    elif kind == "reaction_walk":
        assert ("downstream" if plan.subjects else "upstream") == detail
        assert plan.depth == 3
    elif kind == "reaction_scope" and detail:
        assert [e.id for e in plan.entities if e.type == "reaction"] == [detail]


def test_a_pathway_named_beside_a_compound_narrows_its_reactions() -> None:
    plan = read("Which glycolysis reactions use ATP?", GENES, PATHWAYS)
    assert plan.kind == "entity_reactions" and [e.id for e in plan.subjects] == ["CHEBI:30616"]
    assert [e.id for e in plan.objects] == ["R-HSA-70171"] and plan.role == "input"


def test_a_role_word_about_the_reaction_s_other_thing_leaves_the_entity_s_role_open() -> None:
    """ "Does GCK take part in a reaction that produces …?" asks about a reaction GCK catalyses, not about GCK as an
    output: read as an output, the answer was "Flux holds no reaction in which GCK takes part as an output"."""
    other = read("Does GCK take part in a reaction that produces fructose?", GENES, PATHWAYS)
    assert (other.kind, [e.id for e in other.subjects], other.role) == ("entity_reactions", ["HGNC:4195"], None)
    own = read("Which reactions that produce G6P are there?", GENES, PATHWAYS)
    assert (own.kind, [e.id for e in own.subjects], own.role) == ("entity_reactions", ["CHEBI:4170"], "output")
    assert read("Which reactions does GCK catalyse?", GENES, PATHWAYS).role == "catalyst"


def test_short_compound_names_match_only_as_written() -> None:
    assert [c.id for c in REACTIONS.compounds_in("Which reactions release Pi?")] == ["CHEBI:43474"]
    assert REACTIONS.compounds_in("the value of pi in a typical pipeline") == []
    assert [c.id for c in REACTIONS.compounds_in("which reactions use atp and g6p?")] == ["CHEBI:30616", "CHEBI:4170"]
    assert [c.id for c in REACTIONS.compounds_in("ATP, then CHEBI:4170")] == ["CHEBI:30616", "CHEBI:4170"]


def test_other_questions_are_not_read_as_reaction_questions() -> None:
    assert read("Which genes are in glycolysis?", GENES, PATHWAYS).kind == "members"
    assert read("Which pathways contain GCK?", GENES, PATHWAYS).kind == "gene_pathways"
    assert read("Which drugs inhibit GCK?", GENES, PATHWAYS).kind == "scope"


def test_precedes_gives_the_order_and_a_cycle_falls_back_to_ids() -> None:
    refs = [ReactionRef(id=i) for i in ("R-3", "R-1", "R-2", "R-9")]
    ordered, has_order = in_order(refs, [("R-3", "R-1"), ("R-1", "R-2")])
    assert [r.id for r in ordered] == ["R-3", "R-9", "R-1", "R-2"] and has_order
    ordered, has_order = in_order(refs, [("R-1", "R-2"), ("R-2", "R-1")])
    assert [r.id for r in ordered] == ["R-1", "R-2", "R-3", "R-9"] and not has_order
    assert in_order(refs, [])[1] is False


class _Chain:
    """A reader over a chain R0 → R1 → … → R9 (each output consumed by the next) with ATP beside every step."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def step(self, frontier: list[str], direction: str, depth: int) -> tuple[list[WalkStep], list[NodeRef]]:
        self.calls.append(frontier)
        out = []
        for rid in frontier:
            n = int(rid[1:]) + (1 if direction == "downstream" else -1)
            if 0 <= n <= 9:
                out.append(
                    WalkStep(
                        source=ReactionRef(id=rid),
                        target=ReactionRef(id=f"R{n}"),
                        through=NodeRef(id=f"X{n}", name=f"x{n}"),
                        depth=depth,
                    )
                )
        return out, [NodeRef(id="CHEBI:30616", name="ATP")]


def test_the_walk_is_bounded_and_names_the_hubs_it_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _Chain()
    steps, hubs, truncated = reaction_walk.walk(chain, [ReactionRef(id="R2")], "downstream", 3)  # type: ignore[arg-type]
    assert [s.target.id for s in steps] == ["R3", "R4", "R5"] and [s.depth for s in steps] == [1, 2, 3]
    assert [h.name for h in hubs] == ["ATP"] and not truncated and len(chain.calls) == 3
    monkeypatch.setattr(reaction_walk, "MAX_REACHED", 2)
    steps, _, truncated = reaction_walk.walk(_Chain(), [ReactionRef(id="R0")], "downstream", 9)  # type: ignore[arg-type]
    assert len(steps) == 2 and truncated
    steps, _, _ = reaction_walk.walk(_Chain(), [ReactionRef(id="R1")], "upstream", 5)  # type: ignore[arg-type]
    assert [s.target.id for s in steps] == ["R0"]


def _answer(data: object) -> tuple[str, float, list[str]]:
    import json

    reply, evidence = compose_answer(data)  # type: ignore[arg-type]
    body = json.loads(reply)
    return body["answer"], body["confidence"], [e.id for e in evidence]


def test_each_walk_step_is_stated_and_cited() -> None:
    g6p, f6p = ReactionRef(id="R-HSA-70420", name="HK phosphorylates Glc"), ReactionRef(id="R-HSA-70471", name="GPI")
    data = ReactionWalkData(
        start=NodeRef(id="HGNC:4195", name="GCK", source="hgnc"),
        start_kind="gene",
        direction="downstream",
        first=[g6p],
        max_depth=3,
        steps=[WalkStep(source=g6p, target=f6p, through=NodeRef(id="CHEBI:4170", name="G6P"), depth=1)],
        hubs_skipped=[NodeRef(id="CHEBI:30616", name="ATP")],
    )
    text, confidence, cited = _answer(data)
    assert 'R-HSA-70420 "HK phosphorylates Glc" produces G6P [CHEBI:4170], which R-HSA-70471' in text
    assert "does not pass through ATP" in text and confidence > 0.9
    assert {"HGNC:4195", "R-HSA-70420", "R-HSA-70471", "CHEBI:4170"} <= set(cited)
    hub = data.model_copy(
        update={
            "start": NodeRef(id="CHEBI:30616", name="ATP"),
            "start_kind": "compound",
            "steps": [],
            "start_is_hub": True,
        }
    )
    assert "does not walk downstream from it" in _answer(hub)[0]


def test_participants_and_involvements_are_stated_by_role() -> None:
    r = ReactionRef(id="R-HSA-70420", name="HK phosphorylates Glc", pathway="R-HSA-70171")
    data = ReactionParticipantsData(
        reaction=r,
        participants=[
            Participant(id="CHEBI:30616", name="ATP", entity="compound", role="input"),
            Participant(id="R-HSA-1", name="HK isoforms", entity="set", role="catalyst", parts=["GCK", "HK1"]),
        ],
        followed_by=[ReactionRef(id="R-HSA-70471", name="GPI")],
    )
    text, _, cited = _answer(data)
    assert "consumes ATP [CHEBI:30616]" in text and "is catalysed by HK isoforms [R-HSA-1] (GCK, HK1)" in text
    assert "It is followed by R-HSA-70471" in text and "R-HSA-70471" in cited
    only = data.model_copy(update={"asked_role": "output"})
    assert "Flux holds no output for" in _answer(only)[0]
    involved = EntityReactionsData(
        entity=NodeRef(id="HGNC:4195", name="GCK", source="hgnc"),
        involvements=[Involvement(reaction=r, role="catalyst", via=NodeRef(id="R-HSA-1", name="HK isoforms"))],
        count=True,
    )
    text, _, _ = _answer(involved)
    assert "GCK (HGNC:4195) takes part in 1 reactions" in text and "through HK isoforms [R-HSA-1]" in text


def test_a_pathway_without_reactions_is_answered_with_what_is_held() -> None:
    data = ReactionScopeData(
        asked="R-HSA-109581 'Apoptosis'",
        held=[NodeRef(id="R-HSA-70171", name="Glycolysis", source="reactome", size=15)],
        reactions=15,
    )
    text, confidence, cited = _answer(data)
    assert text.startswith("Flux does not hold that: it holds reactions for 1 pathways (R-HSA-70171")
    assert "not for R-HSA-109581 'Apoptosis'" in text and "live mode" in text
    assert confidence == 0.0 and cited == []


def test_a_walk_inside_a_pathway_keeps_only_the_steps_that_stay_in_it() -> None:
    plan = read("In Glycolysis, what precedes R-HSA-70467?", GENES, PATHWAYS)
    assert plan.kind == "reaction_walk" and reaction_walk.start_of(plan) == (plan.objects[0], False)
    assert [e.id for e in plan.subjects] == ["R-HSA-70171"]

    def step(a: str, b: str, depth: int) -> WalkStep:
        return WalkStep(source=ReactionRef(id=a), target=ReactionRef(id=b), depth=depth)

    steps = [step("R0", "R1", 1), step("R0", "X1", 1), step("X1", "R2", 2), step("R1", "R3", 2)]
    assert [s.target.id for s in reaction_walk.keep_inside(steps, {"R1", "R2", "R3"})] == ["R1", "R3"]


def test_an_explanation_or_a_request_for_papers_is_the_literatures() -> None:
    for question in (
        "Why is the R-HSA-70467 reaction the main control point of glycolysis?",
        "Are there papers on how GCK reactions are regulated?",
        "How does ATP inhibit the reactions of glycolysis?",
    ):
        assert read(question, GENES, PATHWAYS).kind in ("literature", "scope"), question


def test_every_reaction_answer_has_a_table_the_page_can_show() -> None:
    from retrieval.kinds.registry import kind

    r = ReactionRef(id="R-HSA-70420", name="HK")
    for data in (
        ReactionParticipantsData(reaction=r, participants=[Participant(id="CHEBI:1", entity="compound", role="input")]),
        EntityReactionsData(entity=NodeRef(id="CHEBI:1"), involvements=[Involvement(reaction=r, role="input")]),
        ReactionWalkData(
            start=NodeRef(id="R-HSA-70420"),
            start_kind="reaction",
            direction="upstream",
            first=[r],
            max_depth=3,
            steps=[WalkStep(source=r, target=ReactionRef(id="R-HSA-1"), depth=1)],
        ),
        ReactionScopeData(asked="x", held=[NodeRef(id="R-HSA-70171", size=15)]),
    ):
        shown = kind(data.kind).table(data)
        assert shown is not None and shown.rows and len(shown.rows[0]) == len(shown.columns)
