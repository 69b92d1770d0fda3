"""Semantic chunking: pure functions, no I/O. The embedder is passed in, so tests use a tiny deterministic one.

Prose: split into sentences (pysbd, rule-based, no model download), embed them, and break after sentence i
when the cosine distance between sentences i and i+1 is above the 75th percentile of this document's distances.
Chunks smaller than `min_chars` are merged into a neighbour, chunks larger than `max_chars` are split at sentence
boundaries (a single overlong sentence at word boundaries). A document too short to split is one chunk. The title
is kept with the first chunk.

Lists (member genes, compounds, …): packed in order into chunks of at most `max_chars`, each prefixed with the
title and the list's label, because a percentile of distances between gene symbols means nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

EmbedFn = Callable[[Sequence[str]], np.ndarray]
CHUNKER_VERSION = "semantic-v1"
_LIST_LINE = re.compile(r"^\s*([A-Za-z][\w /()-]{0,60}):\s*(.+)$")


@dataclass(frozen=True)
class ChunkerConfig:
    min_chars: int = 200
    max_chars: int = 1500
    percentile: float = 75.0

    @property
    def signature(self) -> str:
        return f"{CHUNKER_VERSION}:{self.min_chars}:{self.max_chars}:{self.percentile:g}"


@lru_cache(maxsize=1)
def _segmenter():  # type: ignore[no-untyped-def]
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    text = text.strip()
    if not text:
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


def breakpoints(embeddings: np.ndarray, percentile: float) -> list[int]:
    """Indices i after which to break: distance(i, i+1) strictly above the document's percentile."""
    if len(embeddings) < 3:
        return []
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    unit = embeddings / np.clip(norms, 1e-12, None)
    distances = 1.0 - np.sum(unit[:-1] * unit[1:], axis=1)
    threshold = float(np.percentile(distances, percentile))
    return [i for i, d in enumerate(distances) if d > threshold]


def _group(sentences: list[str], cuts: list[int]) -> list[str]:
    groups, start = [], 0
    for cut in cuts:
        groups.append(" ".join(sentences[start : cut + 1]))
        start = cut + 1
    groups.append(" ".join(sentences[start:]))
    return [g for g in groups if g]


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Greedily join pieces with spaces into strings of at most max_chars (each piece fits on its own)."""
    out: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > max_chars:
            out.append(current)
            current = piece
        else:
            current = f"{current} {piece}".strip()
    if current:
        out.append(current)
    return out


def _split_long(text: str, max_chars: int) -> list[str]:
    """Split at sentence boundaries; a sentence that alone exceeds max_chars is split between words."""
    pieces = [
        piece
        for sentence in split_sentences(text) or [text]
        for piece in ([sentence] if len(sentence) <= max_chars else _split_words(sentence, max_chars))
    ]
    return _pack(pieces, max_chars)


def _split_words(text: str, max_chars: int) -> list[str]:
    # A "word" longer than a chunk (sequences, URLs) is cut into max_chars slices first.
    words = [word[i : i + max_chars] for word in text.split() for i in range(0, len(word), max_chars)]
    return _pack(words, max_chars)


def _merge_small(chunks: list[str], min_chars: int, max_chars: int) -> list[str]:
    """Merge each chunk under min_chars into its next neighbour (the last one into its previous), as long as
    the result stays within max_chars."""
    merged: list[str] = []
    carry = ""
    for chunk in chunks:
        text = f"{carry} {chunk}".strip() if carry else chunk
        if len(text) < min_chars:
            carry = text
            continue
        merged.append(text)
        carry = ""
    if carry:
        if merged and len(merged[-1]) + 1 + len(carry) <= max_chars:
            merged[-1] = f"{merged[-1]} {carry}"
        else:
            merged.append(carry)
    return merged


def parse_list(text: str) -> tuple[str, list[str]] | None:
    """'Member genes: TP53, MDM2, …' (one labelled, comma-separated list) → (label, items); else None."""
    match = _LIST_LINE.match(text.strip())
    if not match or "\n" in text.strip():
        return None
    items = [i.strip() for i in match.group(2).split(",") if i.strip()]
    if len(items) < 3 or any(len(i) > 60 or (i.endswith(".") and " " in i) for i in items):
        return None
    return match.group(1), items


def chunk_list(title: str, label: str, items: list[str], max_chars: int) -> list[str]:
    prefix = f"{title} — {label}: " if title else f"{label}: "
    chunks, current = [], []
    for item in items:
        candidate = prefix + ", ".join([*current, item])
        if current and len(candidate) > max_chars:
            chunks.append(prefix + ", ".join(current))
            current = [item]
        else:
            current.append(item)
    if current:
        chunks.append(prefix + ", ".join(current))
    return chunks


@dataclass(frozen=True)
class DocumentPlan:
    """What chunking one document needs before any model work: its list, or its sentences and whether the
    percentile rule needs their vectors (a short document or a list needs none)."""

    listed: tuple[str, list[str]] | None
    sentences: list[str]
    needs_vectors: bool


def plan_document(content: str, config: ChunkerConfig) -> DocumentPlan:
    listed = parse_list(content)
    if listed is not None:
        return DocumentPlan(listed, [], False)
    sentences = split_sentences(content)
    return DocumentPlan(None, sentences, len(sentences) > 2 and len(content) > config.min_chars)


def finish_document(
    title: str, plan: DocumentPlan, sentence_vectors: np.ndarray | None, config: ChunkerConfig
) -> list[str]:
    """The chunk texts of a planned document, given its sentences' vectors when the plan needs them."""
    if plan.listed is not None:
        return chunk_list(title, *plan.listed, config.max_chars)
    sentences = plan.sentences
    if not plan.needs_vectors:
        chunks = [" ".join(sentences)] if sentences else []
    else:
        if sentence_vectors is None:
            raise ValueError("this document's plan needs its sentence vectors")
        cuts = breakpoints(np.asarray(sentence_vectors), config.percentile)
        chunks = _merge_small(_group(sentences, cuts), config.min_chars, config.max_chars)
    chunks = [
        piece
        for chunk in chunks
        for piece in (_split_long(chunk, config.max_chars) if len(chunk) > config.max_chars else [chunk])
    ]
    return _with_title(title.strip(), chunks, config.max_chars)


def chunk_document(title: str, content: str, embed: EmbedFn, config: ChunkerConfig) -> list[str]:
    """The chunk texts of one document, in order. Never empty when title or content is non-empty."""
    plan = plan_document(content, config)
    vectors = np.asarray(embed(plan.sentences)) if plan.needs_vectors else None
    return finish_document(title, plan, vectors, config)


def chunk_block(
    documents: Sequence[tuple[str, str]],
    encode: EmbedFn,
    config: ChunkerConfig,
    dimension: int,
    plans: Sequence[DocumentPlan] | None = None,
) -> tuple[list[list[str]], np.ndarray]:
    """Each (title, content) document's chunk texts, and one vector per chunk text (in order), from at most two
    encode calls for the whole block: every sentence the percentile rule needs, then every chunk text not already
    encoded. One call over many documents lets the model batch by length; a text is encoded once per block, so a
    chunk that is one sentence reuses that sentence's vector. `plans` (`plan_document` of each content), when
    given, were made elsewhere: sentence splitting can run beside the model instead of before it."""
    if plans is None:
        plans = [plan_document(content, config) for _, content in documents]
    vectors = _encode_new([s for plan in plans if plan.needs_vectors for s in plan.sentences], encode, {})
    chunks = [
        finish_document(
            title, plan, np.stack([vectors[s] for s in plan.sentences]) if plan.needs_vectors else None, config
        )
        for (title, _), plan in zip(documents, plans, strict=True)
    ]
    texts = [text for document in chunks for text in document]
    vectors = _encode_new(texts, encode, vectors)
    if not texts:
        return chunks, np.zeros((0, dimension), dtype=np.float32)
    return chunks, np.stack([vectors[t] for t in texts]).astype(np.float32, copy=False)


def _encode_new(texts: list[str], encode: EmbedFn, known: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    new = [t for t in dict.fromkeys(texts) if t not in known]
    return known | dict(zip(new, np.asarray(encode(new)), strict=True)) if new else known


def _with_title(title: str, chunks: list[str], max_chars: int) -> list[str]:
    """Prefix the title to the first chunk, re-splitting that chunk if the title would push it past max_chars."""
    if not title:
        return chunks
    if not chunks:
        return [title]
    room = max_chars - len(title) - 2
    head = [chunks[0]]
    if len(chunks[0]) > room and room >= 20:
        head = _split_long(chunks[0], room)
    return [f"{title}\n\n{head[0]}", *head[1:], *chunks[1:]]
