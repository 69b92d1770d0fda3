"""Whole-document vectors for the retrieval scorecard's baseline, kept in Postgres by encoder and content hash: a
re-evaluation after a refresh encodes only the documents whose text is new, not all of them again."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import Engine

Encode = Callable[[list[str]], np.ndarray]


def document_vectors(engine: Engine, encoder: str, hashes: Sequence[str], bodies: Sequence[str], encode: Encode
                     ) -> tuple[np.ndarray, int]:
    """One float32 row per body (in order) and how many were encoded now; the rest come from earlier runs."""
    current = sorted(set(hashes))
    stored = _stored(engine, encoder, current)
    missing = list(dict.fromkeys(h for h in hashes if h not in stored))
    if missing:
        first_body = {h: b for h, b in zip(hashes, bodies, strict=True)}
        vectors = np.asarray(encode([first_body[h] for h in missing]), dtype=np.float32)
        fresh = dict(zip(missing, vectors, strict=True))
        _store(engine, encoder, fresh)
        stored |= fresh
    _prune(engine, current)
    return np.stack([stored[h] for h in hashes]) if hashes else np.zeros((0, 0), np.float32), len(missing)


def _stored(engine: Engine, encoder: str, hashes: list[str]) -> dict[str, np.ndarray]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT content_hash, embedding FROM eval_baseline_vectors"
                                 " WHERE encoder = :e AND content_hash = ANY(:h)"), {"e": encoder, "h": hashes})
        return {r.content_hash: np.frombuffer(r.embedding, dtype=np.float32) for r in rows}


def _store(engine: Engine, encoder: str, vectors: dict[str, np.ndarray]) -> None:
    # One transaction; a concurrent run that stored the same text first keeps its row (the same vector).
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO eval_baseline_vectors (encoder, content_hash, embedding)"
                          " VALUES (:e, :h, :v) ON CONFLICT (encoder, content_hash) DO NOTHING"),
                     [{"e": encoder, "h": h, "v": v.astype(np.float32).tobytes()} for h, v in vectors.items()])


def _prune(engine: Engine, current: list[str]) -> None:
    """Texts no active document has any longer, under every encoder: the table stays the size of the corpus for
    each encoder still in use."""
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM eval_baseline_vectors WHERE NOT (content_hash = ANY(:h))"), {"h": current})
