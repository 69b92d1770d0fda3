"""Postgres retriever: pgvector top-k (HNSW, cosine) and BM25 top-k, united by chunk id (a chunk found by both
is one candidate carrying both ranks), reranked, best `keep` returned as citable chunk evidence."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg import sql
from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.engine import Connection, Engine

from dagster_project.index.tables import as_sql, qualified
from retrieval.model.types import Evidence
from retrieval.retrievers.bm25 import BM25Index
from retrieval.retrievers.rerank import Reranker


def _columns(vector: str) -> str:
    return f"c.id, c.content, c.source, c.title, c.external_id, 1 - (c.embedding <=> {vector}) AS cosine"


_COLUMNS = _columns("CAST(:v AS vector)")


@dataclass(frozen=True)
class ChunkQueries:
    """The statements over one index version's chunk table (blue/green: a version reads only its own rows)."""

    dense: TextClause
    dense_in_sources: TextClause
    by_ids: TextClause
    dense_many: TextClause
    by_ids_many: TextClause

    @classmethod
    @functools.cache
    def for_table(cls, table: str) -> ChunkQueries:
        """Built once per table: a retriever is made per query, its statements need not be."""
        source = as_sql(sql.SQL("SELECT " + _COLUMNS + " FROM {} c").format(qualified(table)))
        return cls(
            dense=text(f"{source} ORDER BY c.embedding <=> CAST(:v AS vector) LIMIT :k"),
            dense_in_sources=text(
                f"{source} WHERE c.source IN :sources ORDER BY c.embedding <=> CAST(:v AS vector) LIMIT :k"
            ).bindparams(bindparam("sources", expanding=True)),
            by_ids=text(f"{source} WHERE c.id IN :ids").bindparams(bindparam("ids", expanding=True)),
            # Many queries in one statement: each query vector's own top-k by the same index scan (LATERAL), in
            # the scan's order (`r`), as the one-query statement returns them.
            dense_many=text(
                as_sql(
                    sql.SQL(
                        "SELECT q.i, d.* FROM unnest(CAST(:vs AS vector[])) WITH ORDINALITY AS q(v, i)"
                        " CROSS JOIN LATERAL"
                        " (SELECT x.*, row_number() OVER () AS r FROM (SELECT " + _columns("q.v") + " FROM {} c"
                        " ORDER BY c.embedding <=> q.v LIMIT :k) x) d ORDER BY q.i, d.r"
                    ).format(qualified(table))
                )
            ),
            by_ids_many=text(
                as_sql(
                    sql.SQL(
                        "SELECT q.i, " + _columns("q.v") + " FROM unnest(CAST(:is AS bigint[]), CAST(:ids AS text[]),"
                        " CAST(:vs AS vector[])) AS q(i, id, v) JOIN {} c ON c.id = q.id"
                    ).format(qualified(table))
                )
            ),
        )


EF_SCALE_FROM = 100_000  # vectors: up to here the configured ef_search holds recall@10 ≥ 0.99
EF_PER_DECADE = 2.5  # beyond, ef_search grows by 2.5 times the configured value per tenfold vectors (350 at 1M)


def served_ef_search(vectors: int, configured: int) -> int:
    """ef_search for a chunk table of `vectors` rows. HNSW recall at a fixed ef_search falls as the graph grows
    (0.963 at 100, 0.98 at about 350, on 1M vectors: BENCHMARKS.md, `benchmarks/hnsw_sweep.py`), so the served
    value scales with the table's size from the configured one, up to pgvector's maximum of 1000."""
    if vectors <= EF_SCALE_FROM:
        return configured
    return min(1000, math.ceil(configured * (1 + EF_PER_DECADE * math.log10(vectors / EF_SCALE_FROM))))


def vector_literal(vector: Sequence[float] | np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


class PostgresRetriever:
    def __init__(
        self,
        engine: Engine,
        table: str,
        bm25: BM25Index,
        reranker: Reranker,
        *,
        dense_k: int,
        bm25_k: int,
        keep: int,
        ef_search: int,
    ) -> None:
        self.engine = engine
        self.queries = ChunkQueries.for_table(table)
        self.bm25 = bm25
        self.reranker = reranker
        self.dense_k, self.bm25_k, self.keep, self.ef_search = dense_k, bm25_k, keep, ef_search

    def scan_settings(self, conn: Connection) -> None:
        """How this transaction's vector searches run; SET LOCAL keeps each to the transaction.

        ef_search bounds the HNSW candidate list. The planner prices an HNSW scan above a sequential scan and sort
        at a high ef_search or on a small table, and would then answer exactly at a cost that grows with the table:
        sequential scans are off, so a served search always reads the index. A source filter that leaves fewer
        than k rows among the first candidates keeps scanning the graph, in distance order (pgvector 0.8's
        iterative scan), instead of returning short."""
        conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}"))
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        conn.execute(text("SET LOCAL hnsw.iterative_scan = strict_order"))

    def dense(self, conn: Connection, literal: str, sources: list[str] | None) -> list[Any]:
        """pgvector top-k by cosine (HNSW); rows carry the chunk text and its cosine."""
        self.scan_settings(conn)
        statement = self.queries.dense_in_sources if sources else self.queries.dense
        params = {"v": literal, "k": self.dense_k} | ({"sources": list(sources)} if sources else {})
        return list(conn.execute(statement, params).all())

    def lexical(self, query: str, sources: list[str] | None) -> list[tuple[str, float]]:
        return self.bm25.search(query, self.bm25_k, sources)

    def lexical_many(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        return self.bm25.search_many(queries, self.bm25_k)

    def candidates(self, query: str, vector: Sequence[float], sources: list[str] | None = None) -> list[Evidence]:
        """The union of both searches, before reranking; each candidate carries the ranks that found it."""
        literal = vector_literal(vector)
        lexical = self.lexical(query, sources)
        with self.engine.begin() as conn:
            dense_rows = self.dense(conn, literal, sources)
            rows = {r.id: r for r in dense_rows}
            missing = [cid for cid, _ in lexical if cid not in rows]
            rows |= _by_ids(conn, self.queries.by_ids, missing, literal)
        return _merge(query, dense_rows, lexical, rows)

    def candidates_many(
        self, queries: list[str], vectors: Sequence[Sequence[float]]
    ) -> tuple[list[list[Any]], list[list[tuple[str, float]]], list[list[Evidence]]]:
        """`candidates` for many queries (no source filter) in two statements and one BM25 call: each query's dense
        rows, its BM25 hits and its candidates, exactly as the one-query path finds them."""
        literals = [vector_literal(v) for v in vectors]
        lexical = self.lexical_many(queries)
        dense: list[list[Any]] = [[] for _ in queries]
        with self.engine.begin() as conn:
            self.scan_settings(conn)
            for row in conn.execute(self.queries.dense_many, {"vs": literals, "k": self.dense_k}):
                dense[row.i - 1].append(row)
            rows = [{r.id: r for r in found} for found in dense]
            missing = [(i, cid) for i, hits in enumerate(lexical) for cid, _ in hits if cid not in rows[i]]
            if missing:
                for row in conn.execute(
                    self.queries.by_ids_many,
                    {
                        "is": [i for i, _ in missing],
                        "ids": [cid for _, cid in missing],
                        "vs": [literals[i] for i, _ in missing],
                    },
                ):
                    rows[row.i][row.id] = row
        merged = [_merge(q, d, hits, found) for q, d, hits, found in zip(queries, dense, lexical, rows, strict=True)]
        return dense, lexical, merged

    def retrieve(self, query: str, vector: Sequence[float], sources: list[str] | None = None) -> list[Evidence]:
        return self.reranker.rerank(query, self.candidates(query, vector, sources))[: self.keep]


def _merge(query: str, dense_rows: list[Any], lexical: list[tuple[str, float]], rows: dict[str, Any]) -> list[Evidence]:
    merged: dict[str, dict[str, float]] = {}
    for rank, row in enumerate(dense_rows, start=1):
        merged[row.id] = {"dense_rank": rank, "cosine": float(row.cosine)}
    for rank, (chunk_id, score) in enumerate(lexical, start=1):
        if chunk_id in rows:
            merged.setdefault(chunk_id, {"cosine": float(rows[chunk_id].cosine or 0.0)})
            merged[chunk_id] |= {"bm25_rank": rank, "bm25": score}
    return [_evidence(rows[cid], signals, query) for cid, signals in merged.items()]


def _by_ids(conn: Connection, statement: TextClause, ids: list[str], literal: str) -> dict[str, object]:
    if not ids:
        return {}
    return {r.id: r for r in conn.execute(statement, {"ids": ids, "v": literal}).all()}


def _evidence(row: object, signals: dict[str, float], query: str) -> Evidence:
    return Evidence(
        id=row.id,
        kind="chunk",
        text=row.content,
        title=row.title,
        source=row.source,  # type: ignore[attr-defined]
        scores=signals,
        query=query,
    )
