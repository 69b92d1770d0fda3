"""The retrieval scorecard's whole-document baseline on a cold store: every document encoded, against documents
indexed as one chunk taking that chunk's vector. Both built in this process, from an empty vector store.

    FLUX_HOME=.flux/bench FLUX_SOURCE_MODE=snapshot FLUX_SNAPSHOT_DIR=../shared/data FLUX_PG_DATABASE=flux_snapshot \\
        .venv/bin/python benchmarks/baseline_reuse.py

Needs a materialized candidate index (`flux materialize`). Prints each build's seconds and the ratio, how many
documents each encoded, the largest difference between the two matrices, and the baseline's dense MRR@10 per
retrieval task for: the earlier document form (`title. content`, every document encoded), the current form
(`title`, blank line, `content`) encoded, and the current form with chunks reused.
"""

from __future__ import annotations

import time

import numpy as np
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.evals.questions import retrieval_tasks
from dagster_project.evals.retrieval_eval import Baseline, reciprocal_rank
from dagster_project.index.encoder import load_sentence_model
from retrieval.model.index_state import latest_candidate


def mrr(matrix: np.ndarray, keys: list[str], vectors: np.ndarray, relevant: list[str]) -> float:
    scores = vectors @ matrix.T
    top = np.argsort(-scores, axis=1)[:, :10]
    return float(np.mean([reciprocal_rank([keys[i] for i in row], r) for row, r in zip(top, relevant, strict=True)]))


def main() -> None:
    settings = get_settings()
    engine = engine_for(settings.platform_database_url)
    pipeline = eval_pipeline(settings, latest_candidate(engine))
    model = load_sentence_model(settings.index.embedding_model)  # loaded before either clock starts
    pipeline.embed_many(["warm-up"])

    started = time.perf_counter()
    encoded_all = Baseline.build(pipeline, reuse_chunks=False)
    all_seconds = time.perf_counter() - started
    started = time.perf_counter()
    reused = Baseline.build(pipeline)
    reuse_seconds = time.perf_counter() - started
    print(
        f"documents {len(reused.keys)}: every one encoded {all_seconds:.1f} s ({encoded_all.encoded} encoded); "
        f"single chunks reused {reuse_seconds:.1f} s ({reused.encoded} encoded, {reused.from_chunks} from chunks)"
        f" = {reuse_seconds / all_seconds:.2f}x"
    )
    print(f"largest difference between the matrices: {np.abs(reused.matrix - encoded_all.matrix).max():.2e}")

    with pipeline.retriever.engine.connect() as conn:
        earlier = dict(
            conn.execute(
                text(
                    "SELECT source || '_' || external_id, title || '. ' || content FROM documents"
                    " WHERE status = 'active' ORDER BY 1"
                )
            ).all()
        )
    earlier_keys = list(earlier)
    earlier_matrix = np.asarray(
        model.encode(
            list(earlier.values()),
            batch_size=settings.index.embedding_batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        ),
        dtype=np.float32,
    )
    print("task | questions | baseline_dense MRR@10: 'title. content' encoded / title+blank line encoded / reused")
    for task, questions in retrieval_tasks(settings, engine, settings.evals.eval_retrieval_questions).items():
        vectors = np.asarray(pipeline.embed_many([q.question for q in questions]), dtype=np.float32)
        relevant = [q.relevant_doc for q in questions]
        figures = [
            mrr(earlier_matrix, earlier_keys, vectors, relevant),
            mrr(encoded_all.matrix, encoded_all.keys, vectors, relevant),
            mrr(reused.matrix, reused.keys, vectors, relevant),
        ]
        print(f"{task} | {len(questions)} | " + " / ".join(f"{f:.4f}" for f in figures))


if __name__ == "__main__":
    main()
