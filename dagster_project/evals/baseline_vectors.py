"""Vectors the retrieval scorecard keeps in Postgres between runs, by encoder and text hash: the whole-document
baseline's (`eval_baseline_vectors`) and the questions' (`eval_query_vectors`). A re-evaluation after a refresh
encodes only the documents and questions whose text is new, not all of them again.

A document the index holds as one chunk already has its vector: that chunk is the whole document (title, blank line,
content), so when the model reads the same tokens from both texts the chunk's vector is the document's, and even a
cold build encodes only the documents that were split."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import Engine

Encode = Callable[[list[str]], np.ndarray]
Tokenize = Callable[[list[str]], list[list[int]]]


def document_vectors(
    engine: Engine | None,
    encoder: str,
    hashes: Sequence[str],
    bodies: Sequence[str],
    encode: Encode,
    known: Mapping[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, int]:
    """One float32 row per body (in order) and how many were encoded now. The rest are `known` (by hash) or come
    from earlier runs; with no `engine` nothing is read or kept."""
    return _vectors(_DOCUMENTS, engine, encoder, hashes, bodies, encode, known)


def query_vectors(
    engine: Engine | None, encoder: str, queries: Sequence[str], encode: Encode
) -> tuple[np.ndarray, int]:
    """One float32 row per query (in order) and how many were encoded now. `encoder` names the model, dimension
    and query prefix: a vector is only reused under the same three. Queries not in `queries` are dropped."""
    hashes = [hashlib.md5(q.encode()).hexdigest() for q in queries]
    return _vectors(_QUERIES, engine, encoder, hashes, queries, encode, None)


@dataclass(frozen=True)
class _Table:
    name: str
    key: str


_DOCUMENTS = _Table("eval_baseline_vectors", "content_hash")
_QUERIES = _Table("eval_query_vectors", "query_hash")


def _vectors(
    table: _Table,
    engine: Engine | None,
    encoder: str,
    hashes: Sequence[str],
    texts: Sequence[str],
    encode: Encode,
    known: Mapping[str, np.ndarray] | None,
) -> tuple[np.ndarray, int]:
    current = sorted(set(hashes))
    have = dict(known or {})
    if engine is not None:
        have |= _stored(table, engine, encoder, [h for h in current if h not in have])
    missing = list(dict.fromkeys(h for h in hashes if h not in have))
    if missing:
        first_text = {h: t for h, t in zip(hashes, texts, strict=True)}
        vectors = np.asarray(encode([first_text[h] for h in missing]), dtype=np.float32)
        fresh = dict(zip(missing, vectors, strict=True))
        if engine is not None:
            _store(table, engine, encoder, fresh)
        have |= fresh
    if engine is not None:
        _prune(table, engine, current)
    return (
        np.stack([have[h] for h in hashes]).astype(np.float32, copy=False) if hashes else np.zeros((0, 0), np.float32)
    ), len(missing)


def single_chunk_vectors(engine: Engine, model: str) -> dict[str, tuple[str, np.ndarray]]:
    """Document key (`{source}_{external_id}`) → (its only chunk's text, that chunk's vector), for every active
    document indexed as one chunk whose vector is current under `model`."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT d.source || '_' || d.external_id AS key, c.content, c.embedding::text AS embedding"
                " FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE d.status = 'active' AND c.embedding IS NOT NULL AND c.embedding_model = :m"
                " AND c.embedded_content_hash = c.content_hash"
                " AND NOT EXISTS (SELECT 1 FROM chunks o WHERE o.document_id = c.document_id AND o.id <> c.id)"
            ),
            {"m": model},
        ).all()
    # pgvector prints each float4 in its shortest exact form: the text reads back to the same float32 values.
    return {r.key: (r.content, np.asarray(json.loads(r.embedding), dtype=np.float32)) for r in rows}


def reusable_vectors(
    keys: Sequence[str],
    hashes: Sequence[str],
    bodies: Sequence[str],
    chunks: Mapping[str, tuple[str, np.ndarray]],
    tokenize: Tokenize,
) -> dict[str, np.ndarray]:
    """Body hash → its single chunk's vector, where the model's input for the chunk (`tokenize`: token ids as the
    encoder truncates them) is the input for the body: the same vector, to the float rounding of batching."""
    pairs = [(h, b, chunks[k]) for k, h, b in zip(keys, hashes, bodies, strict=True) if k in chunks]
    if not pairs:
        return {}
    body_ids = tokenize([b for _, b, _ in pairs])
    chunk_ids = tokenize([c for _, _, (c, _) in pairs])
    return {
        h: vector
        for (h, _, (_, vector)), mine, theirs in zip(pairs, body_ids, chunk_ids, strict=True)
        if mine == theirs
    }


def _stored(table: _Table, engine: Engine, encoder: str, hashes: list[str]) -> dict[str, np.ndarray]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                f"SELECT {table.key} AS hash, embedding FROM {table.name} WHERE encoder = :e AND {table.key} = ANY(:h)"
            ),
            {"e": encoder, "h": hashes},
        )
        return {r.hash: np.frombuffer(r.embedding, dtype=np.float32) for r in rows}


def _store(table: _Table, engine: Engine, encoder: str, vectors: dict[str, np.ndarray]) -> None:
    # One transaction; a concurrent run that stored the same text first keeps its row (the same vector).
    with engine.begin() as conn:
        conn.execute(
            text(
                f"INSERT INTO {table.name} (encoder, {table.key}, embedding) VALUES (:e, :h, :v)"
                f" ON CONFLICT (encoder, {table.key}) DO NOTHING"
            ),
            [{"e": encoder, "h": h, "v": v.astype(np.float32).tobytes()} for h, v in vectors.items()],
        )


def _prune(table: _Table, engine: Engine, current: list[str]) -> None:
    """Texts no longer current (no active document has them, no question asks them), under every encoder: the
    table stays the size of the corpus or question set for each encoder still in use."""
    with engine.begin() as conn:
        conn.execute(text(f"DELETE FROM {table.name} WHERE NOT ({table.key} = ANY(:h))"), {"h": current})
