"""Chunks and vectors in Postgres: re-chunk only what changed, write vectors in atomic batches."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pgvector.psycopg import register_vector
from sqlalchemy import Connection, Engine, text

from dagster_project.sources.model import content_hash
from dagster_project.storage.bulk import copy_into_temp


@dataclass(frozen=True)
class DocumentToChunk:
    id: int
    source: str
    external_id: str
    title: str
    content: str
    content_hash: str
    dataset_version: str | None


def chunk_id(source: str, external_id: str, index: int) -> str:
    return f"{source}_{external_id}_{index}"


def chunked_key(document_hash: str, signature: str) -> str:
    return f"{document_hash}:{signature}"


def documents_to_chunk(engine: Engine, signature: str) -> list[DocumentToChunk]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT id, source, external_id, title, content, content_hash, dataset_version FROM documents"
                " WHERE status = 'active' AND chunked_key IS DISTINCT FROM content_hash || ':' || :sig ORDER BY id"
            ),
            {"sig": signature},
        )
        return [DocumentToChunk(*row) for row in rows]


def remove_chunks_of_gone_documents(engine: Engine) -> int:
    with engine.begin() as conn:
        removed = conn.execute(
            text("DELETE FROM chunks c USING documents d WHERE c.document_id = d.id AND d.status <> 'active'")
        ).rowcount
        conn.execute(
            text("UPDATE documents SET chunked_key = NULL WHERE status <> 'active' AND chunked_key IS NOT NULL")
        )
    return removed


def replace_chunks(
    engine: Engine,
    batch: Sequence[tuple[DocumentToChunk, list[str]]],
    signature: str,
    provenance: dict[str, Any],
    vectors: tuple[str, np.ndarray] | None = None,
) -> tuple[int, int]:
    """Swap the chunks of these documents in one transaction; (chunks written, vectors written). A chunk whose id
    and text did not change keeps its vector. `vectors` (model, one row per chunk in order) are the chunks' own,
    computed with them; they land in the same transaction, for the chunks that have no vector of that model."""
    rows = [
        (
            chunk_id(doc.source, doc.external_id, i),
            doc.id,
            i,
            chunk,
            content_hash(chunk),
            len(chunk.split()),
            json.dumps(
                {**provenance, "dataset_version": doc.dataset_version, "document_content_hash": doc.content_hash}
            ),
        )
        for doc, chunks in batch
        for i, chunk in enumerate(chunks)
    ]
    ids = [doc.id for doc, _ in batch]
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "chunks_in",
            [
                ("id", "text"),
                ("document_id", "bigint"),
                ("chunk_index", "int"),
                ("content", "text"),
                ("content_hash", "text"),
                ("token_count", "int"),
                ("provenance", "jsonb"),
            ],
            rows,
        )
        conn.execute(
            text(
                "CREATE TEMP TABLE old_vectors ON COMMIT DROP AS SELECT id, content_hash, embedding, embedding_model,"
                " embedded_content_hash FROM chunks WHERE document_id = ANY(:ids)"
            ),
            {"ids": ids},
        )
        conn.execute(text("DELETE FROM chunks WHERE document_id = ANY(:ids)"), {"ids": ids})
        conn.execute(
            text(
                "INSERT INTO chunks (id, document_id, chunk_index, content, content_hash, token_count, provenance,"
                " embedding, embedding_model, embedded_content_hash)"
                " SELECT n.id, n.document_id, n.chunk_index, n.content, n.content_hash, n.token_count, n.provenance,"
                " o.embedding, o.embedding_model, o.embedded_content_hash"
                " FROM chunks_in n LEFT JOIN old_vectors o ON o.id = n.id AND o.content_hash = n.content_hash"
            )
        )
        conn.execute(
            text("UPDATE documents SET chunked_key = content_hash || ':' || :sig WHERE id = ANY(:ids)"),
            {"sig": signature, "ids": ids},
        )
        embedded = 0
        if vectors is not None and rows:
            model, matrix = vectors
            embedded = _update_vectors(
                conn, [r[0] for r in rows], [r[4] for r in rows], matrix, model, only_missing=True
            )
    return len(rows), embedded


def chunks_to_embed(engine: Engine, model: str) -> pd.DataFrame:
    """Chunks with no vector for their current text under the current model."""
    with engine.connect() as conn:
        return pd.read_sql(
            text(
                "SELECT id, content, content_hash FROM chunks WHERE embedding IS NULL"
                " OR embedded_content_hash IS DISTINCT FROM content_hash OR embedding_model IS DISTINCT FROM :m"
                " ORDER BY id"
            ),
            conn,
            params={"m": model},
        )


def write_vectors(engine: Engine, ids: Sequence[str], hashes: Sequence[str], vectors: np.ndarray, model: str) -> int:
    """One transaction: binary COPY into a temp table, then one UPDATE. Either the whole batch lands or none.

    The content-hash join means a chunk re-written while this batch was being embedded keeps no stale vector."""
    with engine.begin() as conn:
        return _update_vectors(conn, ids, hashes, vectors, model)


def _update_vectors(
    conn: Connection,
    ids: Sequence[str],
    hashes: Sequence[str],
    vectors: np.ndarray,
    model: str,
    only_missing: bool = False,
) -> int:
    raw = conn.connection.driver_connection
    register_vector(raw)
    dim = int(vectors.shape[1])
    conn.exec_driver_sql(
        f"CREATE TEMP TABLE vectors_in (id text, content_hash text, embedding vector({dim})) ON COMMIT DROP"
    )
    with (
        raw.cursor() as cur,
        cur.copy("COPY vectors_in (id, content_hash, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy,
    ):
        copy.set_types(["text", "text", "vector"])
        for chunk, digest, vector in zip(ids, hashes, vectors, strict=True):
            copy.write_row((chunk, digest, vector.astype(np.float32)))
    # only_missing: a chunk that kept its vector (same text, same model) keeps it bit for bit.
    statement = _SET_MISSING_VECTORS if only_missing else _SET_VECTORS
    return conn.execute(text(statement), {"m": model}).rowcount


_SET_VECTORS = (
    "UPDATE chunks c SET embedding = v.embedding, embedding_model = :m, embedded_content_hash = v.content_hash"
    " FROM vectors_in v WHERE c.id = v.id AND c.content_hash = v.content_hash"
)
_SET_MISSING_VECTORS = (
    _SET_VECTORS + " AND (c.embedding IS NULL OR c.embedding_model IS DISTINCT FROM :m"
    " OR c.embedded_content_hash IS DISTINCT FROM c.content_hash)"
)


def write_vector_batches(engine: Engine, batches: Iterable[dict[str, np.ndarray]], model: str) -> int:
    written = 0
    for batch in batches:
        written += write_vectors(
            engine, list(batch["id"]), list(batch["content_hash"]), np.stack(batch["embedding"]), model
        )
    return written
