"""The semantic chunking rule with a tiny deterministic embedder: breaks land exactly where the rule says."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dagster_project.index.chunker import ChunkerConfig, breakpoints, chunk_document, parse_list, split_sentences

TOPICS = ("glycolysis", "apoptosis", "insulin", "kinase")


def topic_embed(sentences: Sequence[str]) -> np.ndarray:
    """One axis per topic word: same topic → distance 0, different topic → distance 1."""
    vectors = np.zeros((len(sentences), len(TOPICS) + 1))
    for row, sentence in enumerate(sentences):
        hits = [i for i, t in enumerate(TOPICS) if t in sentence.lower()]
        vectors[row, hits[0] if hits else len(TOPICS)] = 1.0
    return vectors


def sentences(topic: str, n: int) -> list[str]:
    return [f"Sentence {i} is about {topic} and nothing else." for i in range(n)]


LOOSE = ChunkerConfig(min_chars=0, max_chars=5000)


def test_breaks_fall_where_distance_exceeds_the_75th_percentile() -> None:
    text = " ".join(sentences("glycolysis", 3) + sentences("apoptosis", 3) + sentences("insulin", 2))
    chunks = chunk_document("", text, topic_embed, LOOSE)
    assert [c.count("Sentence") for c in chunks] == [3, 3, 2]
    assert all(len({t for t in TOPICS if t in c}) == 1 for c in chunks)


def test_percentile_rule_directly() -> None:
    # distances: 0, 1, 0, 0, 1, 0, 0, 0 → 75th percentile 0.25 → breaks after sentences 1 and 4
    vectors = topic_embed(["glycolysis", "glycolysis", "apoptosis", "apoptosis", "apoptosis", "insulin",
                           "insulin", "insulin", "insulin"])
    assert breakpoints(vectors, 75.0) == [1, 4]
    assert breakpoints(vectors[:2], 75.0) == []


def test_min_and_max_bounds_hold() -> None:
    text = " ".join(sentences("glycolysis", 2) + sentences("apoptosis", 12) + sentences("kinase", 1))
    config = ChunkerConfig(min_chars=150, max_chars=400)
    chunks = chunk_document("", text, topic_embed, config)
    assert all(len(c) <= 400 for c in chunks)
    assert all(len(c) >= 150 for c in chunks[:-1])
    assert " ".join(chunks).split() == text.split(), "chunking never drops or reorders words"


def test_title_is_kept_with_the_first_chunk_and_within_bounds() -> None:
    text = " ".join(sentences("glycolysis", 6) + sentences("insulin", 6))
    config = ChunkerConfig(min_chars=50, max_chars=300)
    chunks = chunk_document("Glycolysis and insulin", text, topic_embed, config)
    assert chunks[0].startswith("Glycolysis and insulin\n\nSentence 0")
    assert all(len(c) <= 300 for c in chunks)
    assert sum("Glycolysis and insulin" in c for c in chunks) == 1


def test_short_empty_one_sentence_and_unicode_documents() -> None:
    assert chunk_document("", "", topic_embed, LOOSE) == []
    assert chunk_document("Only a title", "", topic_embed, LOOSE) == ["Only a title"]
    assert chunk_document("", "One sentence about p53.", topic_embed, LOOSE) == ["One sentence about p53."]
    text = "Le rôle de l’apoptose — β-caténine et TNF-α. Deuxième phrase über Zellen. 第三句。"  # noqa: RUF001
    chunks = chunk_document("Ünïcødé", text, topic_embed, ChunkerConfig(min_chars=10, max_chars=60))
    assert all(len(c) <= 60 for c in chunks) and "β-caténine" in " ".join(chunks)


def test_an_overlong_sentence_is_split_between_words() -> None:
    long_sentence = "kinase " * 200
    chunks = chunk_document("", long_sentence.strip() + ".", topic_embed, ChunkerConfig(min_chars=10, max_chars=100))
    assert len(chunks) > 1 and all(len(c) <= 100 for c in chunks)


def test_member_lists_are_packed_not_split_by_percentile() -> None:
    genes = [f"GENE{i}" for i in range(300)]
    content = "Member genes: " + ", ".join(genes)
    assert parse_list(content) == ("Member genes", genes)
    chunks = chunk_document("Glycolysis", content, topic_embed, ChunkerConfig(min_chars=50, max_chars=200))
    assert all(c.startswith("Glycolysis — Member genes: ") and len(c) <= 200 for c in chunks)
    packed = [g for c in chunks for g in c.split(": ", 1)[1].split(", ")]
    assert packed == genes
    assert parse_list("Summary: TP53 binds DNA. It is a tumour suppressor. MDM2 degrades it.") is None


@pytest.mark.parametrize("text", ["Dr. Smith et al. showed that p53 (i.e. TP53) binds DNA. A second one."])
def test_sentence_splitter_respects_abbreviations(text: str) -> None:
    assert len(split_sentences(text)) == 2
