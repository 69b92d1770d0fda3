"""Chunk vectors derived from the sentence vectors the chunker already has, instead of encoding each chunk text:
what a cold build would save, and what dense retrieval would lose.

    FLUX_HOME=.flux/bench FLUX_SOURCE_MODE=snapshot FLUX_SNAPSHOT_DIR=../shared/data FLUX_PG_DATABASE=flux_snapshot \\
        .venv/bin/python benchmarks/derived_chunk_vectors.py

Needs a materialized index and a retrieval scorecard run (its stored question vectors). Each document is split as the
chunker splits it and its sentences encoded (batch 16). A chunk made of whole sentences gets the token-weighted mean
of their vectors, with the first chunk's title encoded on its own and weighted the same way, normalised. A chunk
that is not (a pathway's member list, a short document the percentile rule never needed, a sentence cut between
words) is encoded as today; those encodes are timed. Quality: each retrieval task's dense MRR@10 at document level,
exact cosine over every chunk, with the indexed vectors and with the derived ones.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict

import numpy as np
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.evals.baseline_vectors import query_vectors
from dagster_project.evals.questions import retrieval_tasks
from dagster_project.evals.retrieval_eval import doc_ranking, reciprocal_rank
from dagster_project.index.chunker import ChunkerConfig, plan_document
from dagster_project.index.encoder import load_sentence_model


def members(body: str, sentences: list[str], start: int) -> tuple[list[int], int] | None:
    """The sentences (from `start`) that joined with spaces are `body`, and the next start; None when it is not."""
    acc, picked, i = "", [], start
    while i < len(sentences):
        candidate = sentences[i] if not acc else f"{acc} {sentences[i]}"
        picked.append(i)
        if body == candidate:
            return picked, i + 1
        if not body.startswith(candidate + " "):
            return None
        acc, i = candidate, i + 1
    return None


def main() -> None:
    s = get_settings()
    engine = engine_for(s.platform_database_url)
    model = load_sentence_model(s.index.embedding_model)
    tok = model.tokenizer
    config = ChunkerConfig(s.index.chunk_min_chars, s.index.chunk_max_chars)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT d.id AS doc, d.title, d.content, c.id, c.chunk_index, c.content AS chunk,"
                " c.embedding::text AS v"
                " FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status = 'active'"
                " ORDER BY d.id, c.chunk_index"
            )
        ).all()
    docs: dict[int, list] = defaultdict(list)
    for r in rows:
        docs[r.doc].append(r)
    ids = [r.id for r in rows]
    indexed = np.asarray([json.loads(r.v) for r in rows], dtype=np.float32)

    def enc(texts: list[str]) -> np.ndarray:
        return model.encode(texts, batch_size=16, normalize_embeddings=True, show_progress_bar=False)

    plans = {d: plan_document(rs[0].content, config) for d, rs in docs.items()}
    sentences = list(dict.fromkeys(x for p in plans.values() if p.needs_vectors for x in p.sentences))
    started = time.perf_counter()
    svec = dict(zip(sentences, enc(sentences), strict=True))
    sentence_seconds = time.perf_counter() - started
    titles = list(
        dict.fromkeys(rs[0].title.strip() for d, rs in docs.items() if plans[d].needs_vectors and rs[0].title.strip())
    )
    started = time.perf_counter()
    tvec = dict(zip(titles, enc(titles), strict=True))
    title_seconds = time.perf_counter() - started

    def ntok(text_: str) -> int:
        return len(tok(text_, add_special_tokens=False)["input_ids"])

    derived = indexed.copy()
    fallback: list[int] = []
    row = 0
    for d, rs in docs.items():
        plan, title = plans[d], rs[0].title.strip()
        start = 0
        for r in rs:
            body, parts = r.chunk, []
            if r.chunk_index == 0 and title and body.startswith(f"{title}\n\n"):
                body, parts = body[len(title) + 2 :], [(tvec.get(title), ntok(title))]
            got = members(body, plan.sentences, start) if plan.needs_vectors else None
            if got is None or any(v is None for v, _ in parts):
                fallback.append(row)
            else:
                picked, start = got
                parts += [(svec[plan.sentences[i]], ntok(plan.sentences[i])) for i in picked]
                if len(parts) > 1:
                    v = sum(w * vec for vec, w in parts)
                    derived[row] = v / np.linalg.norm(v)
                else:
                    derived[row] = parts[0][0]
            row += 1
    fb_texts = list(dict.fromkeys(rows[i].chunk for i in fallback))
    fb_texts = [t for t in fb_texts if t not in svec]
    started = time.perf_counter()
    enc(fb_texts)
    fallback_seconds = time.perf_counter() - started
    print(
        f"chunks {len(rows)}: derived {len(rows) - len(fallback)}, still encoded {len(fallback)}"
        f" ({len(fb_texts)} texts, {fallback_seconds:.1f} s); sentences {len(sentences)} {sentence_seconds:.1f} s;"
        f" titles {len(titles)} {title_seconds:.1f} s"
    )
    cos = np.sum(indexed * derived, axis=1)
    print(f"cosine(indexed, derived): mean {cos.mean():.4f}, p5 {np.percentile(cos, 5):.4f}, min {cos.min():.4f}")
    idx = s.index
    tasks = retrieval_tasks(s, engine, s.evals.eval_retrieval_questions)
    queries = list(dict.fromkeys(q.question for qs in tasks.values() for q in qs))  # the scorecard's set: no prune
    matrix, encoded = query_vectors(
        engine, f"{idx.embedding_model}/{idx.embedding_dim}/prefix={idx.embedding_query_prefix}", queries, enc
    )
    print(f"queries {len(queries)}, encoded now {encoded}")
    vector_of = dict(zip(queries, matrix, strict=True))
    for task, qs in tasks.items():
        qv = np.stack([vector_of[q.question] for q in qs])
        out = []
        for m in (indexed, derived):
            top = np.argsort(-(qv @ m.T), axis=1)[:, :60]
            out.append(
                np.mean(
                    [
                        reciprocal_rank(doc_ranking(ids[i] for i in t), q.relevant_doc)
                        for t, q in zip(top, qs, strict=True)
                    ]
                )
            )
        print(f"{task} ({len(qs)}): dense MRR@10 indexed {out[0]:.4f} / derived {out[1]:.4f}")


if __name__ == "__main__":
    main()
