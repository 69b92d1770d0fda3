"""Strategy memory's selection (retrieval/pubmed/strategies.py: `choose`), measured on the failure-mode set's
rephrasings and near misses: a rephrased question reuses its original's final term, a question that shares most
words but not the distinctive ones (BRCA1/BRCA2, SGLT1/SGLT2, a year) never does. The Postgres store itself is
tested against Postgres (tests/integration/test_literature_tools.py)."""

from __future__ import annotations

from dagster_project.evals.pubmed_eval import ListMemory, RecordedEUtils, load, search_scores
from retrieval.pubmed.search import CheckedSearch
from retrieval.pubmed.strategies import Strategy, choose, dice, tokens
from retrieval.question.literature_questions import read_request


def _stored(*questions: str) -> list[tuple[list[str], Strategy]]:
    return [(tokens(q)[0], Strategy(f"term of {q}", "", 2, q)) for q in questions]


def test_digits_and_capitals_are_distinctive_and_question_words_are_not() -> None:
    content, distinctive = tokens("How many PubMed articles on BRCA1 and ovarian cancer since 2020?")
    assert content == ["2020", "brca1", "cancer", "ovarian"]
    assert {"brca1", "2020"} <= set(distinctive)
    assert tokens("BRCA2 ovarian cancer")[1] != tokens("BRCA1 ovarian cancer")[1]


def test_a_near_miss_scores_high_but_the_gate_refuses_it() -> None:
    stored = _stored("How many papers on BRCA1 ovarian cancer?")
    asked = "How many papers on BRCA2 ovarian cancer?"
    assert dice(tokens(asked)[0], stored[0][0]) >= 0.6  # the score alone would reuse BRCA1's strategy
    assert choose(asked, stored) is None
    assert choose(asked, stored, gate=False) is not None


def test_a_rephrasing_reuses_the_stored_strategy() -> None:
    stored = _stored("What are the newest papers on long covid brain fog?")
    chosen = choose("Latest articles about brain fog in long covid", stored)
    assert chosen is not None and chosen.final_term == "term of What are the newest papers on long covid brain fog?"


def test_on_the_probes_the_gate_keeps_false_reuse_at_zero_and_without_it_reuse_goes_wrong() -> None:
    """The metric moves: the gated memory reuses every rephrasing and no near miss; an ungated one (overlap only)
    reuses near misses too."""
    data = load()
    scores = search_scores(data)
    assert scores["memory_hit_rate"] == 1.0 and scores["memory_false_reuse"] == 0
    assert scores["requests_per_rephrasing"]["with_memory"] < scores["requests_per_rephrasing"]["without_memory"]

    items = [i for i in data["items"] if i["sent_by"] == "flux"]
    search, memory = CheckedSearch(RecordedEUtils(items)), ListMemory()  # type: ignore[arg-type]
    for item in items:
        request = read_request(item["question"])
        assert request is not None
        search.search(item["question"], request, memory=memory)  # type: ignore[arg-type]
    near_misses = [p["question"] for p in data["memory_probes"]["probes"] if p["same_as"] is None]
    ungated = sum(choose(q, memory.stored, gate=False) is not None for q in near_misses)
    assert ungated >= 3
