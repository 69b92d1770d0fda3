"""Context tiers: what an LLM is shown of each evidence item (full, 1,000 or 200 characters, or dropped) by its
relevance, inside the character budget (retrievers/context.py, used by answering/llm.py's prompt)."""

from __future__ import annotations

from retrieval.answering.llm import format_evidence
from retrieval.model.types import Evidence
from retrieval.retrievers.context import ELLIPSIS, cut, header, relevance, shown_context, tier_context, tier_map

LONG = "glycolysis converts glucose into pyruvate " * 80  # ~3,400 characters


def chunk(ident: str, score: float, text: str = LONG) -> Evidence:
    return Evidence(id=ident, kind="chunk", source="pubmed", title=f"Title {ident}", text=text, score=score)


def graph(ident: str, score: float, text: str = LONG) -> Evidence:
    return Evidence(id=ident, kind="graph", source="reactome", title=ident, text=text, score=score)


def shown_chars(items: list) -> int:
    return sum(len(header(i.evidence)) + 1 + len(i.text) for i in items if i.tier != "dropped")


def test_with_room_to_spare_relevance_alone_sets_the_tier() -> None:
    evidence = [chunk("a", 0.033), chunk("b", 0.020), chunk("c", 0.010)]
    items = tier_context(evidence, budget=100_000)
    assert [i.tier for i in items] == ["full", "1000", "200"]
    assert items[0].text == LONG
    assert len(items[1].text) <= 1000 and len(items[2].text) <= 200
    assert items[1].text.endswith(ELLIPSIS) and LONG.startswith(items[2].text[: -len(ELLIPSIS)])


def test_relevance_is_measured_within_each_kind() -> None:
    # RRF scores (~0.03) and graph cosines (~0.8) never compete: the best of each kind is the most relevant.
    evidence = [graph("R-HSA-1", 0.80), graph("R-HSA-2", 0.40), chunk("c1", 0.033), chunk("c2", 0.016)]
    assert relevance(evidence) == [1.0, 0.0, 1.0, 0.0]
    assert tier_map(tier_context(evidence, 100_000)) == {"R-HSA-1": "full", "R-HSA-2": "200", "c1": "full", "c2": "200"}


def test_equal_scores_are_all_shown_in_full_and_short_texts_are_never_called_cut() -> None:
    evidence = [chunk("a", 0.0), chunk("b", 0.0), chunk("short", -5.0, "Hexokinase phosphorylates glucose.")]
    tiers = tier_map(tier_context(evidence, 100_000))
    assert tiers == {"a": "full", "b": "full", "short": "full"}  # the short one is least relevant, but whole


def test_a_tight_budget_demotes_the_best_before_it_drops_anything() -> None:
    evidence = [chunk("a", 0.9), chunk("b", 0.8), chunk("c", 0.7), chunk("d", 0.6)]
    budget = 1_500  # four snippets fit, one 1,000-character text beside three snippets does not
    items = tier_context(evidence, budget)
    assert [i.tier for i in items] == ["200", "200", "200", "200"]
    assert shown_chars(items) <= budget


def test_what_does_not_fit_is_the_least_relevant_and_is_dropped() -> None:
    evidence = [chunk("low", 0.1), chunk("best", 0.9), chunk("mid", 0.5)]
    items = tier_context(evidence, budget=450)  # room for two snippets only
    assert tier_map(items) == {"low": "dropped", "best": "200", "mid": "200"}
    assert [i.evidence.id for i in items] == ["low", "best", "mid"]  # the prompt keeps the retrieval order
    assert items[0].text == "" and shown_chars(items) <= 450


def test_the_budget_bounds_the_prompt_at_every_size() -> None:
    evidence = [chunk(f"c{i}", 1.0 / (i + 1)) for i in range(12)]
    for budget in (1_000, 2_500, 6_000, 16_000):
        items = tier_context(evidence, budget)
        assert shown_chars(items) <= budget, budget
        kept = [i for i in items if i.tier != "dropped"]
        assert kept and kept[0].evidence.id == "c0"  # the most relevant item is always shown


def test_cut_ends_on_a_word_with_an_ellipsis() -> None:
    text = "alpha beta gamma delta epsilon"
    assert cut(text, 100) == text
    assert cut(text, 14) == "alpha beta" + ELLIPSIS and len(cut(text, 14)) <= 14


def test_the_prompt_shows_the_tiers_and_leaves_out_the_dropped() -> None:
    evidence = [chunk("best", 0.9), chunk("low", 0.1)]
    prompt = format_evidence(evidence, budget=100_000)
    assert f"[best] (pubmed) Title best\n{LONG}" in prompt
    low_text = tier_context(evidence, 100_000)[1].text
    assert f"[low] (pubmed) Title low\n{low_text}" in prompt and LONG not in prompt.split("[low]")[1]
    assert "[low]" not in format_evidence([chunk("best", 0.9), chunk("low", 0.1)], budget=300)
    assert format_evidence(evidence) == "\n\n".join(f"{header(e)}\n{e.text}" for e in evidence)  # no budget: whole


def test_shown_context_is_what_claims_are_checked_against() -> None:
    evidence = [chunk("best", 0.9), chunk("low", 0.1), chunk("gone", 0.0)]
    shown, tiers = shown_context(evidence, 700)
    assert tiers == {"best": "200", "low": "200", "gone": "200"}  # three snippets fill 700 characters
    assert set(shown) == set(tiers)
    assert all(text.startswith(f"Title {i}. ") and len(text) <= len(f"Title {i}. ") + 200 for i, text in shown.items())
    whole, none = shown_context(evidence, None)
    assert none == {} and whole["gone"] == f"Title gone. {LONG}"
