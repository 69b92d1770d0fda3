"""Retrieval scorecard: document-level hit@1, hit@5 and MRR@10 for dense only, BM25 only, hybrid (the union,
interleaved, no reranker) and hybrid + the configured reranker — each through the same PostgresRetriever serving
uses — beside a plain baseline measured in the same run: the same embedding model over whole documents with
exact cosine search, and bm25s over whole documents.

Each task (questions.retrieval_tasks) is scored on its own, its metrics prefixed with the task name, with its
`verbatim_rate`: the share of queries found word for word in some indexed chunk. A task whose queries are copied
from the index measures string matching, not retrieval, so only tasks at 0 are gated (evals/gate.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.evals.baseline_vectors import (
    document_vectors,
    query_vectors,
    reusable_vectors,
    single_chunk_vectors,
)
from dagster_project.evals.questions import EvalQuestion
from retrieval.pipeline import Pipeline
from retrieval.retrievers.bm25 import BM25Index
from retrieval.retrievers.bm25 import tokenize as tokenize_words
from retrieval.retrievers.pg_retriever import vector_literal

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

VARIANTS = ("dense", "bm25", "hybrid", "hybrid_rerank", "baseline_dense", "baseline_bm25")
Progress = Callable[[int, int], None]
BULK_SIZE = 500  # questions per bulk search: one statement and one BM25 call each, progress between them
LATENCY_SAMPLE = 50  # questions timed one at a time through the served path, for the latency figures


def doc_key(chunk_id: str) -> str:
    """`{source}_{external_id}_{chunk_index}` → `{source}_{external_id}`."""
    return chunk_id.rsplit("_", 1)[0]


def doc_ranking(chunk_ids: Iterable[str], k: int = 10) -> list[str]:
    return list(dict.fromkeys(doc_key(c) for c in chunk_ids))[:k]


def interleave(*rankings: list[str]) -> list[str]:
    """Round-robin union without scores: what fusion adds is measured by the reranked variant."""
    out: dict[str, None] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                out.setdefault(ranking[rank])
    return list(out)


def reciprocal_rank(ranking: list[str], relevant: str, k: int = 10) -> float:
    return next((1.0 / (i + 1) for i, doc in enumerate(ranking[:k]) if doc == relevant), 0.0)


@dataclass
class Baseline:
    """Whole documents: one exact-cosine matrix and one bm25s index."""

    keys: list[str]
    matrix: np.ndarray
    bm25: BM25Index
    build_seconds: float
    encoded: int = 0  # documents encoded for this build; the others' vectors were stored by an earlier one
    from_chunks: int = 0  # distinct document texts whose vector is their only chunk's

    @classmethod
    def build(cls, pipeline: Pipeline, store: Engine | None = None, reuse_chunks: bool = True) -> Baseline:
        """`store`: a platform connection that may write (the pipeline's is serving's read-only role), to keep the
        vectors for the next build; without it every document is encoded. With `reuse_chunks`, a document indexed
        as one chunk takes that chunk's vector instead (baseline_vectors.reusable_vectors)."""
        import bm25s

        started = time.perf_counter()
        with pipeline.retriever.engine.connect() as conn:
            # Title, blank line, content: the document as the chunker writes it, so one chunk can stand for it.
            rows = conn.execute(
                text(
                    "SELECT key, body, md5(body) AS hash FROM (SELECT source || '_' || external_id AS key,"
                    " title || E'\\n\\n' || content AS body FROM documents WHERE status = 'active') d ORDER BY 1"
                )
            ).all()
        keys, bodies, hashes = [r.key for r in rows], [r.body for r in rows], [r.hash for r in rows]
        index = pipeline.settings.index

        def model() -> SentenceTransformer:
            from dagster_project.index.encoder import load_sentence_model

            return load_sentence_model(index.embedding_model)

        def encode(texts: list[str]) -> np.ndarray:
            return model().encode(
                texts, batch_size=index.embedding_batch_size, normalize_embeddings=True, show_progress_bar=False
            )

        def tokenize(texts: list[str]) -> list[list[int]]:
            return model().tokenizer(texts, truncation=True, max_length=model().max_seq_length)["input_ids"]

        chunks = single_chunk_vectors(pipeline.retriever.engine, index.embedding_model) if reuse_chunks else {}
        known = reusable_vectors(keys, hashes, bodies, chunks, tokenize)
        matrix, encoded = document_vectors(
            store, f"{index.embedding_model}/{index.embedding_dim}", hashes, bodies, encode, known
        )
        retriever = bm25s.BM25(k1=pipeline.settings.retrieval.bm25_k1, b=pipeline.settings.retrieval.bm25_b)
        retriever.index(tokenize_words(bodies), show_progress=False)
        # BM25Index maps bm25s rows to ids; here the ids are document keys with a dummy chunk suffix.
        lexical = BM25Index(directory=Path("in-memory"), retriever=retriever, chunk_ids=[f"{k}_0" for k in keys])
        return cls(keys, matrix, lexical, time.perf_counter() - started, encoded, len(known))

    def dense(self, vector: list[float], k: int = 10) -> list[str]:
        scores = self.matrix @ np.asarray(vector, dtype=self.matrix.dtype)
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        return [self.keys[i] for i in top[np.argsort(-scores[top])]]

    def lexical(self, query: str, k: int = 10) -> list[str]:
        return [doc_key(c) for c, _ in self.bm25.search(query, k)]

    def lexical_many(self, queries: list[str], k: int = 10) -> list[list[str]]:
        return [[doc_key(c) for c, _ in hits] for hits in self.bm25.search_many(queries, k)]


def _normalized(value: str) -> str:
    return " ".join(value.lower().split())


def indexed_text(pipeline: Pipeline) -> str:
    """Every active chunk, case and spacing folded, one per line: what `verbatim_rate` searches."""
    with pipeline.retriever.engine.connect() as conn:
        # One haystack: a folded query holds no newline, so it cannot match across two chunks.
        return "\n".join(
            _normalized(c)
            for c in conn.execute(
                text(
                    "SELECT c.content FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status = 'active'"
                )
            ).scalars()
        )


def verbatim_rate(haystack: str, questions: list[EvalQuestion]) -> float:
    """Share of queries that occur verbatim (case and spacing folded) in some active chunk (`indexed_text`)."""
    if not questions:
        return 0.0
    return sum(_normalized(q.question) in haystack for q in questions) / len(questions)


def question_vectors(
    pipeline: Pipeline, queries: list[str], store: Engine | None
) -> tuple[dict[str, list[float]], int]:
    """Each query's vector, from one batched encode of those not kept in `store`, and how many were encoded."""
    index = pipeline.settings.index
    matrix, encoded = query_vectors(
        store,
        f"{index.embedding_model}/{index.embedding_dim}/prefix={index.embedding_query_prefix}",
        queries,
        lambda texts: np.asarray(pipeline.embed_many(texts), dtype=np.float32),
    )
    return dict(zip(queries, matrix.tolist(), strict=True)), encoded


def evaluate_tasks(
    pipeline: Pipeline,
    tasks: dict[str, list[EvalQuestion]],
    progress: Progress | None = None,
    store: Engine | None = None,
) -> tuple[dict[str, float], list[dict]]:
    """Every task against one baseline build; metrics as `{task}_{variant}_{metric}` plus `{task}_verbatim_rate`.
    Every task's questions are encoded in one batch. `store` keeps the baseline's document vectors and the
    questions' vectors between runs (Baseline.build, baseline_vectors.query_vectors)."""
    baseline = Baseline.build(pipeline, store)
    started = time.perf_counter()
    vector_of, encoded = question_vectors(
        pipeline, list(dict.fromkeys(q.question for questions in tasks.values() for q in questions)), store
    )
    metrics: dict[str, float] = {
        "baseline_build_seconds": round(baseline.build_seconds, 2),
        "baseline_documents_encoded": float(baseline.encoded),
        "baseline_documents_from_chunks": float(baseline.from_chunks),
        "queries_encoded": float(encoded),
        "query_vectors_seconds": round(time.perf_counter() - started, 2),
    }
    haystack = indexed_text(pipeline)
    rows: list[dict] = []
    for task, questions in tasks.items():
        task_metrics, task_rows = evaluate(
            pipeline, questions, baseline, progress, [vector_of[q.question] for q in questions]
        )
        metrics |= {f"{task}_{k}": v for k, v in task_metrics.items()}
        metrics[f"{task}_verbatim_rate"] = verbatim_rate(haystack, questions)
        rows += [{**r, "task": task, "variant": f"{task}:{r['variant']}"} for r in task_rows]
    return metrics, rows


def evaluate(
    pipeline: Pipeline,
    questions: list[EvalQuestion],
    baseline: Baseline,
    progress: Progress | None = None,
    vectors: list[list[float]] | None = None,
) -> tuple[dict[str, float], list[dict]]:
    """Every question's rankings in bulk: one batched encode (or the questions' `vectors`, in order), the dense
    searches in one statement, the BM25 searches in one call; each ranking is what `evaluate_one_at_a_time` finds
    for that question. Latencies are the served path's, measured one question at a time on the first
    LATENCY_SAMPLE questions."""
    if not questions:
        return _metrics([], {v: [] for v in VARIANTS}, 0), []
    retriever = pipeline.retriever
    pg = retriever.postgres_retriever(retriever.index())
    texts = [q.question for q in questions]
    if vectors is None:
        vectors = pipeline.embed_many(texts)
    rows: list[dict] = []
    for start in range(0, len(questions), BULK_SIZE):
        part = slice(start, start + BULK_SIZE)
        dense, lexical, candidates = pg.candidates_many(texts[part], vectors[part])
        baseline_lexical = baseline.lexical_many(texts[part])
        for i, q in enumerate(questions[part]):
            dense_ids, bm25_ids = [r.id for r in dense[i]], [c for c, _ in lexical[i]]
            rankings = {
                "dense": doc_ranking(dense_ids),
                "bm25": doc_ranking(bm25_ids),
                "hybrid": doc_ranking(interleave(dense_ids, bm25_ids)),
                "hybrid_rerank": doc_ranking(e.id for e in retriever.reranker.rerank(q.question, candidates[i])),
                "baseline_dense": baseline.dense(vectors[start + i]),
                "baseline_bm25": baseline_lexical[i],
            }
            rows += _rows(q, rankings, {})
        if progress:
            progress(min(start + BULK_SIZE, len(questions)), len(questions))
    _, sampled = evaluate_one_at_a_time(
        pipeline, questions[:LATENCY_SAMPLE], baseline, vectors=vectors[:LATENCY_SAMPLE]
    )
    latencies = {v: [r["latency_ms"] for r in sampled if r["variant"] == v] for v in VARIANTS}
    return _metrics(rows, latencies, len(questions)) | {"latency_sample": float(len(latencies["dense"]))}, rows


def evaluate_one_at_a_time(
    pipeline: Pipeline,
    questions: list[EvalQuestion],
    baseline: Baseline,
    progress: Progress | None = None,
    vectors: list[list[float]] | None = None,
) -> tuple[dict[str, float], list[dict]]:
    """Each question as serving takes it, alone, with each variant's latency. `vectors`: the questions' vectors
    when they were encoded already (encoding is not part of any variant's latency)."""
    retriever = pipeline.retriever
    index = retriever.index()
    pg = retriever.postgres_retriever(index)
    latencies: dict[str, list[float]] = {v: [] for v in VARIANTS}
    rows: list[dict] = []
    for n, q in enumerate(questions, start=1):
        vector = vectors[n - 1] if vectors is not None else retriever.embed(q.question)
        literal = vector_literal(vector)
        rankings: dict[str, list[str]] = {}
        started = time.perf_counter()
        with retriever.engine.begin() as conn:
            dense_ids = [r.id for r in pg.dense(conn, literal, None)]
        latencies["dense"].append(_ms(started))
        started = time.perf_counter()
        bm25_ids = [c for c, _ in pg.lexical(q.question, None)]
        latencies["bm25"].append(_ms(started))
        started = time.perf_counter()
        candidates = pg.candidates(q.question, vector)
        latencies["hybrid"].append(_ms(started))
        reranked = retriever.reranker.rerank(q.question, candidates)
        latencies["hybrid_rerank"].append(_ms(started))
        rankings["dense"], rankings["bm25"] = doc_ranking(dense_ids), doc_ranking(bm25_ids)
        rankings["hybrid"] = doc_ranking(interleave(dense_ids, bm25_ids))
        rankings["hybrid_rerank"] = doc_ranking(e.id for e in reranked)
        started = time.perf_counter()
        rankings["baseline_dense"] = baseline.dense(vector)
        latencies["baseline_dense"].append(_ms(started))
        started = time.perf_counter()
        rankings["baseline_bm25"] = baseline.lexical(q.question)
        latencies["baseline_bm25"].append(_ms(started))
        rows += _rows(q, rankings, {v: latencies[v][-1] for v in rankings})
        if progress and (n % 100 == 0 or n == len(questions)):
            progress(n, len(questions))
    return _metrics(rows, latencies, len(questions)), rows


def _rows(q: EvalQuestion, rankings: dict[str, list[str]], latency_ms: dict[str, float]) -> list[dict]:
    out = []
    for variant, ranking in rankings.items():
        rr = reciprocal_rank(ranking, q.relevant_doc)
        out.append(
            {
                "question_id": q.id,
                "variant": variant,
                "question": q.question,
                "relevant": q.relevant_doc,
                "rank": round(1 / rr) if rr else None,
                "rr": rr,
                "top": ranking[:5],
                **({"latency_ms": latency_ms[variant]} if variant in latency_ms else {}),
            }
        )
    return out


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _metrics(rows: list[dict], latencies: dict[str, list[float]], n: int) -> dict[str, float]:
    metrics: dict[str, float] = {"questions": float(n)}
    for variant in VARIANTS:
        mine = [r for r in rows if r["variant"] == variant]
        if not mine:
            continue
        ranks = [r["rank"] for r in mine]
        metrics[f"{variant}_hit_at_1"] = sum(1 for r in ranks if r == 1) / len(mine)
        metrics[f"{variant}_hit_at_5"] = sum(1 for r in ranks if r is not None and r <= 5) / len(mine)
        metrics[f"{variant}_mrr_at_10"] = sum(r["rr"] for r in mine) / len(mine)
        metrics[f"{variant}_p50_ms"] = float(np.percentile(latencies[variant], 50))
        metrics[f"{variant}_p95_ms"] = float(np.percentile(latencies[variant], 95))
    return metrics
