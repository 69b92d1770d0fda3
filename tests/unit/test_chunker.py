"""The semantic chunking rule with a tiny deterministic embedder: breaks land exactly where the rule says."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dagster_project.index.chunker import (
    ChunkerConfig,
    breakpoints,
    chunk_block,
    chunk_document,
    parse_list,
    split_sentences,
)

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
    vectors = topic_embed(
        ["glycolysis", "glycolysis", "apoptosis", "apoptosis", "apoptosis", "insulin", "insulin", "insulin", "insulin"]
    )
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


class CountingEncoder:
    """topic_embed plus a per-text component, recording every text it was asked to encode."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.column_stack([topic_embed(texts), [len(t) / 1000 for t in texts]])


def test_a_block_chunks_as_each_document_alone_in_two_encodes_each_text_once() -> None:
    long_sentence = "A single sentence about kinase signalling that is long enough to stand alone " * 3
    documents = [
        ("Glycolysis and insulin", " ".join(sentences("glycolysis", 4) + sentences("insulin", 4))),
        ("", " ".join([*sentences("apoptosis", 3), long_sentence.strip() + ".", *sentences("insulin", 3)])),
        ("Members", "Member genes: TP53, MDM2, CDKN1A, BAX"),
        ("Short", "One sentence about p53."),
        ("", ""),
        ("Repeat", " ".join(sentences("glycolysis", 4) + sentences("insulin", 4))),  # the same sentences again
    ]
    config = ChunkerConfig(min_chars=120, max_chars=400)
    encoder = CountingEncoder()
    chunked, vectors = chunk_block(documents, encoder, config, dimension=len(TOPICS) + 2)

    alone = CountingEncoder()
    assert chunked == [chunk_document(t, c, alone, config) for t, c in documents]
    texts = [t for chunks in chunked for t in chunks]
    assert len(encoder.calls) == 2  # the block's sentences, then the chunk texts not yet encoded
    encoded = [t for call in encoder.calls for t in call]
    assert len(encoded) == len(set(encoded))  # no text encoded twice, even across documents
    assert np.allclose(vectors, CountingEncoder()(texts))  # every chunk has its own text's vector, in order
    reused = [t for t in texts if t in encoder.calls[0]]
    assert reused and not set(reused) & set(encoder.calls[1])  # a one-sentence chunk reuses its sentence's vector


def test_a_block_without_text_encodes_nothing() -> None:
    encoder = CountingEncoder()
    chunked, vectors = chunk_block([("", ""), ("", "  ")], encoder, LOOSE, dimension=7)
    assert chunked == [[], []] and vectors.shape == (0, 7) and encoder.calls == []
