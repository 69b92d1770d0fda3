"""The one tokenizer and English stop list (dagster_project/core/text.py) and every consumer of them.

Each consumer is checked against every word of the tier it uses, so a word added to a tier is checked too: it must
then be dropped by the question terms, the gene-fact reader, the BM25 tokenizer (short tier), pathway-name
comparison (connectives) and the answer cache's distinctive tokens (broad tier)."""

from __future__ import annotations

import bm25s.stopwords
import pytest

from dagster_project.core import text
from dagster_project.resolution.scores import NAME_STOPWORDS, PATHWAY_NAME_WORDS, name_similarity, name_tokens
from retrieval.caching.cache import distinctive_tokens
from retrieval.model import terms
from retrieval.model.genes import GeneLexicon
from retrieval.pubmed.translation import concept_words
from retrieval.question.gene_questions import named_gene
from retrieval.retrievers.bm25 import tokenize


def test_tiers_nest_and_every_word_is_lower_case() -> None:
    assert text.CONNECTIVES < text.SHORT_STOPWORDS < text.STOPWORDS < text.BROAD_STOPWORDS
    assert all(w == w.lower() and w.isalpha() for w in text.BROAD_STOPWORDS | text.CONCEPT_JOINERS)


def test_short_tier_is_the_list_the_bm25_index_was_built_with() -> None:
    # Changing it changes the tokens of every built index; bump bm25_version with it if that is ever wanted.
    assert frozenset(bm25s.stopwords.STOPWORDS_EN) == text.SHORT_STOPWORDS


@pytest.mark.parametrize(
    ("joined_by", "expected"),
    [
        (text.WORD_JOINERS, ["R-HSA-70171", "in", "G1/S", "Crohn's", "TP53", "p53"]),
        ("-", ["R-HSA-70171", "in", "G1", "S", "Crohn", "s", "TP53", "p53"]),
        ("", ["R", "HSA", "70171", "in", "G1", "S", "Crohn", "s", "TP53", "p53"]),
    ],
)
def test_words_keep_only_the_joiners_asked_for(joined_by: str, expected: list[str]) -> None:
    assert text.words("R-HSA-70171 in G1/S, Crohn's: TP53 (p53)?", joined_by) == expected


def test_a_word_starts_with_a_letter_or_digit_and_is_ascii() -> None:
    assert text.words("-ras 'quoted' /x β-catenin") == ["ras", "quoted'", "x", "catenin"]


def test_question_terms_extend_the_english_list_with_question_words() -> None:
    assert terms.QUESTION_STOPWORDS == text.STOPWORDS | terms.PHRASING_WORDS
    assert terms.words is text.words


@pytest.mark.parametrize("word", sorted(text.STOPWORDS))
def test_question_terms_and_gene_reader_drop_every_english_stop_word(word: str) -> None:
    for written in (word, word.capitalize(), word.upper()):
        assert terms.content_words(f"{written} glycolysis") == ["glycolysis"]
        assert terms.key_terms(written) == []
        # Upper-cased, a word left over would be taken for an unknown gene's name.
        assert named_gene(f"What is the official symbol of {written}?", GeneLexicon([])) == (None, "")


@pytest.mark.parametrize("word", sorted(text.SHORT_STOPWORDS))
def test_bm25_drops_every_short_stop_word(word: str) -> None:
    assert tokenize([f"{word} {word.upper()} glycolysis"]) == [["glycolysis"]]


def test_bm25_keeps_the_rest_of_the_english_list() -> None:
    # The index was built with the short list only: "which", "from" are indexed terms.
    assert tokenize(["which genes from glycolysis"]) == [["which", "genes", "from", "glycolysis"]]


@pytest.mark.parametrize("word", sorted(text.BROAD_STOPWORDS))
def test_the_answer_cache_counts_no_broad_stop_word_as_distinctive(word: str) -> None:
    # A negation is not a word here but the sentence's polarity: one marker, "not", whichever word denies.
    polarity = {"not"} if word in {"not", "never", "cannot"} else set()
    assert distinctive_tokens(f"glycolysis {word} MDM2") == {"glycolysis", "mdm2"} | polarity


def test_concept_words_drop_the_concept_joiners_and_keep_other_stop_words() -> None:
    # "not" and "before" are English stop words that the translation check still looks for in a translation.
    assert concept_words("Aspirin versus placebo among adults after stroke, not before") == [
        "aspirin",
        "placebo",
        "adults",
        "stroke",
        "not",
        "before",
    ]


@pytest.mark.parametrize("word", sorted(text.CONNECTIVES))
def test_pathway_names_drop_every_connective(word: str) -> None:
    assert name_tokens(f"{word.capitalize()} glycolysis") == frozenset({"glycolysis"})


def test_pathway_names_extend_the_connectives_with_pathway_words_only() -> None:
    assert NAME_STOPWORDS == text.CONNECTIVES | PATHWAY_NAME_WORDS
    assert not PATHWAY_NAME_WORDS & text.STOPWORDS
    # "through" is an English stop word but not a connective: names are compared with it, as the model was fitted.
    assert name_tokens("ADP signalling through P2Y purinoceptor 12") == {"adp", "through", "p2y", "purinoceptor", "12"}
    assert name_similarity("Wnt/beta-catenin signalling", "Signaling by WNT and beta catenin") == 1.0
