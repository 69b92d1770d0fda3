"""The translation check and its refinements, on the failure-mode set (dagster_project/evals/pubmed_translations.json):
each item is a question, the term sent, Entrez's translation of it and the failures that translation shows.

PubMed Help ("How PubMed works: automatic term mapping"; "Search Field Descriptions and Tags") describes what ATM
does to an untagged term; the set's translations are written in its querytranslation form. The check must find
exactly each item's failures (and none in a translation that may be trusted), and a refinement must send the term
whose translation the set records next, and that translation must pass.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from dagster_project.evals.pubmed_eval import TRANSLATIONS, check_scores
from retrieval.model.literature import LiteratureRequest
from retrieval.pubmed import terms, translation
from retrieval.question.literature_questions import read_request

TODAY = dt.date(2026, 12, 5)
ITEMS = json.loads(TRANSLATIONS.read_text())["items"]


def _request(question: str) -> LiteratureRequest:
    request = read_request(question, TODAY)
    assert request is not None, question
    return request


@pytest.mark.parametrize("item", ITEMS, ids=[i["id"] for i in ITEMS])
def test_the_check_finds_exactly_the_failures_each_translation_shows(item: dict) -> None:
    request = _request(item["question"])
    first = item["exchanges"][0]
    if item["sent_by"] == "flux":
        assert terms.build(request).text() == first["term"]
    found = {p.code for p in translation.check(request, first["translation"], first["count"])}
    assert found == set(item["failures"])


@pytest.mark.parametrize("item", [i for i in ITEMS if i["sent_by"] == "flux" and i["failures"]], ids=lambda i: i["id"])
def test_a_failed_check_is_refined_into_the_term_whose_translation_passes(item: dict) -> None:
    request = _request(item["question"])
    first, second = item["exchanges"]
    problems = translation.check(request, first["translation"], first["count"])
    refined = terms.refine(request, terms.build(request), problems)
    assert refined is not None
    new_request, new_term, changes = refined
    assert new_term.text() == second["term"]
    assert changes and all("it " in change or ":" in change for change in changes)  # each change says why
    assert translation.check(new_request, second["translation"], second["count"]) == []


def test_the_set_has_at_least_thirty_failing_queries_and_every_kind_of_failure() -> None:
    failing = [i for i in ITEMS if i["failures"]]
    assert len(failing) >= 30
    assert {code for i in failing for code in i["failures"]} >= {
        "phrase_swallowed",
        "unmapped_abbreviation",
        "wrong_sense",
        "concept_missing",
        "date_missing",
        "field_missing",
        "publication_type_missing",
        "population_missing",
        "too_broad",
    }


def test_a_check_that_trusts_every_translation_scores_zero_recall() -> None:
    """The metric moves: the check as built finds every labelled failure; one that trusts everything finds none."""
    built = check_scores(ITEMS, translation.check)
    trusting = check_scores(ITEMS, lambda request, text, count: [])
    assert built["recall"] == 1.0 and built["precision"] == 1.0
    assert trusting["recall"] == 0.0


def test_the_seeds_examples() -> None:
    """The three measured examples of the system this descends from: a correct mapping is trusted, an abbreviation
    in [All Fields] and a swallowed phrase are not."""
    good = _request("How many articles on insulin resistance type 2 diabetes?")
    assert translation.check(good, ITEMS[1]["exchanges"][0]["translation"], 48644) == []
    arbs = _request("How many articles on ARBs kidney protection?")
    assert [p.code for p in translation.check(arbs, ITEMS[2]["exchanges"][0]["translation"], 257)] == [
        "unmapped_abbreviation"
    ]
    fog = _request("What are the newest papers on long covid brain fog?")
    assert [p.code for p in translation.check(fog, '"long covid brain fog"[All Fields]', 25)] == ["phrase_swallowed"]


def test_a_quoted_phrase_is_searched_as_written_and_never_split() -> None:
    request = _request('How many articles mention "long covid brain fog"?')
    assert request.quoted == ["long covid brain fog"]
    assert translation.check(request, '"long covid brain fog"[Title/Abstract]', 31) == []


def test_split_and_keeps_quoted_ands_and_nested_groups() -> None:
    text = '("a and b"[All Fields] OR (x[ti] AND y[ti])) AND "c"[MeSH Terms] AND 2020:2021[dp]'
    assert translation.split_and(text) == [
        '"a and b"[All Fields] OR (x[ti] AND y[ti])',
        '"c"[MeSH Terms]',
        "2020:2021[dp]",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "How many PubMed articles have CRISPR in the title from 2023?",
            ("count", ["CRISPR"], "title", "2023", "2023"),
        ),
        ("What are the newest papers on long covid brain fog?", ("articles", ["long covid brain fog"], "", None, None)),
        (
            "How many reviews on exercise and depression since 2020?",
            ("count", ["exercise", "depression"], "", "2020", "2026"),
        ),
        ("Top 5 most relevant papers about ferroptosis", ("articles", ["ferroptosis"], "", None, None)),
        ("How many papers on asthma between 2020 and 2010?", ("count", ["asthma"], "", "2020", "2010")),
    ],
)
def test_literature_questions_are_read_into_requests(question: str, expected: tuple) -> None:
    request = _request(question)
    assert (request.operation, request.concepts, request.field, request.mindate, request.maxdate) == expected


def test_pmid_questions_ask_for_facts_or_links() -> None:
    assert _request("Which papers cite PMID 25274085?").link == "cited_by"
    assert _request("Papers similar to PMID 25274085").link == "similar"
    assert _request("What does PMID 25274085 cite?").link == "references"
    facts = _request("Who wrote PMID 25274085 and PMID 33658472?")
    assert (facts.operation, facts.pmids) == ("facts", ["25274085", "33658472"])


@pytest.mark.parametrize(
    "question",
    [
        "Which pathways contain TP53?",
        "How many genes are in glycolysis?",
        "What does the literature say about apoptosis in neurons?",
        "Is TP53 associated with Li-Fraumeni syndrome?",
    ],
)
def test_questions_about_pathways_genes_or_the_indexed_literature_are_not_literature_tool_questions(
    question: str,
) -> None:
    assert read_request(question, TODAY) is None


def test_the_scorecard_rows_are_keyed_as_the_eval_store_stores_them() -> None:
    from dagster_project.evals.pubmed_eval import scorecard

    metrics, rows, per_failure = scorecard()
    assert len(rows) == len(ITEMS) and all({"question_id", "question"} <= set(row) for row in rows)
    assert metrics["check_recall"] == 1.0 and sum(c["found"] for c in per_failure.values()) == sum(
        len(i["failures"]) for i in ITEMS
    )
