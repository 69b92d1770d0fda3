"""Which whole-document baseline vectors may be taken from the index: only a document's single chunk, and only when
the model would read the same tokens from the chunk as from the document."""

from __future__ import annotations

import numpy as np

from dagster_project.evals.baseline_vectors import reusable_vectors


def _words(texts: list[str]) -> list[list[int]]:
    """Token ids that ignore whitespace, as a WordPiece tokenizer's do; punctuation is a token of its own."""
    return [[hash(w) for w in t.replace(".", " . ").split()] for t in texts]


def test_a_single_chunk_stands_for_its_document_only_when_the_model_input_is_the_same() -> None:
    same, other, unlisted = np.ones(3, np.float32), np.full(3, 2.0, np.float32), np.zeros(3, np.float32)
    keys = ["pubmed_1", "pubmed_2", "pubmed_3"]
    bodies = ["A title\n\nFirst sentence.  Second one.", "Another title\n\nText here.", "Third\n\nUnsplit."]
    hashes = ["h1", "h2", "h3"]
    chunks = {
        "pubmed_1": ("A title\n\nFirst sentence. Second one.", same),  # whitespace differs only
        "pubmed_2": ("Another title\n\nText", other),  # not the whole document
        "other_9": ("Third\n\nUnsplit.", unlisted),
    }  # another document's chunk
    reused = reusable_vectors(keys, hashes, bodies, chunks, _words)
    assert list(reused) == ["h1"] and reused["h1"] is same


def test_nothing_to_reuse_asks_the_tokenizer_nothing() -> None:
    asked: list[list[str]] = []

    def tokenize(texts: list[str]) -> list[list[int]]:
        asked.append(texts)
        return _words(texts)

    assert reusable_vectors(["a_1"], ["h"], ["body"], {}, tokenize) == {} and asked == []
