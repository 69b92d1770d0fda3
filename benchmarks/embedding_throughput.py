"""The Ray model path vs plain in-process encoding on the same real documents, in one process.

    .venv/bin/python benchmarks/embedding_throughput.py [--limit 400] [--ray-address 127.0.0.1:6379]

Reads documents from the platform database (materialize first: `make run`, or FLUX_PG_DATABASE=flux_snapshot for
the snapshot) and measures, in this order:

  fused stage   the `chunks` asset's work: sentences → sentence vectors → percentile split → chunk texts → chunk
                vectors. Baseline: `chunk_block` over all the documents at once with `model.encode` in
                this process (the same two encodes, each over every document: the largest batches there
                are). Ray: `chunk_and_embed_on_ray` on the layout
                `plan_layout` gives the cluster joined.
  embed only    the `chunk_embeddings` asset's work on those chunk texts: `model.encode` vs `embed_on_ray`.

Each line prints items/s and the ratio to its baseline. The fused Ray rate is the work alone (actors up, models
loaded; their start is printed apart, as the baseline's model is loaded before its clock starts); the embed-only
Ray timing includes its actors' start. `--ray-address` joins an existing cluster
(e.g. a two-node local one: `ray start --head --num-cpus 1` and `ray start --address … --num-cpus 1`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sqlalchemy import text

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.defs.resources.ray import ensure_ray
from dagster_project.index.chunker import ChunkerConfig, chunk_block
from dagster_project.index.encoder import load_sentence_model
from dagster_project.index.ray_actors import (
    chunk_and_embed_on_ray,
    cluster_layout,
    embed_on_ray,
    release,
    start_chunk_actors,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=400, help="documents")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--ray-address", default=None, help="join this cluster instead of FLUX_RAY_ADDRESS")
    args = parser.parse_args()
    settings = get_settings()
    with engine_for(settings.platform_database_url).connect() as conn:
        documents = pd.read_sql(
            text(
                "SELECT id AS document_id, title, content FROM documents WHERE status = 'active' ORDER BY id LIMIT :n"
            ),
            conn,
            params={"n": args.limit},
        )
    config = ChunkerConfig(settings.index.chunk_min_chars, settings.index.chunk_max_chars)
    model = load_sentence_model(settings.index.embedding_model)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(list(texts), batch_size=args.batch_size, normalize_embeddings=True, show_progress_bar=False)

    encode(documents["content"].head(16).tolist())  # warm-up: the first call is always slower
    start = time.perf_counter()
    chunked, _ = chunk_block(
        list(zip(documents["title"], documents["content"], strict=True)),
        encode,
        config,
        model.get_sentence_embedding_dimension(),
    )
    texts = [piece for pieces in chunked for piece in pieces]
    plain_fused = len(documents) / (time.perf_counter() - start)
    baseline = encode(texts)  # not timed: the embed-only comparison below needs every chunk text's own vector
    print(f"{len(documents)} documents → {len(texts)} chunks (mean {np.mean([len(t) for t in texts]):.0f} chars)")

    ensure_ray(args.ray_address or settings.resolved_ray_address, settings.ops.ray_num_cpus, settings.home / "ray")
    layout = cluster_layout(settings.index.embedding_actors, settings.index.embedding_cpus_per_actor)
    print(
        f"layout: {layout.actors} actor(s) x {layout.cpus_per_actor} CPU, {layout.gpus_per_actor} GPU, "
        f"{len(layout.nodes)} node(s)"
    )
    print(f"{'fused, plain in-process':<30}{plain_fused:>10.1f} docs/s    1.00x")
    start = time.perf_counter()
    actors = start_chunk_actors(settings.index.embedding_model, layout, args.batch_size, config)
    actor_start = time.perf_counter() - start
    out = list(
        chunk_and_embed_on_ray(
            documents, settings.index.embedding_model, layout, args.batch_size, config, actors=actors
        )
    )
    rate = len(documents) / (time.perf_counter() - start - actor_start)
    release(actors)  # their CPUs (or GPUs) go back for the embed-only pipeline below
    print(f"{'  Ray actor start + model load':<30}{actor_start:>10.1f} s (not in the rate below)")
    same = sum(o.texts == chunked[int(np.flatnonzero(documents["document_id"] == o.document_id)[0])] for o in out)
    nodes = {o.node_id for o in out}
    print(
        f"{'fused, on Ray':<30}{rate:>10.1f} docs/s    {rate / plain_fused:.2f}x  "
        f"({same}/{len(out)} documents chunked identically, {len(nodes)} node(s))"
    )

    start = time.perf_counter()
    encode(texts)
    plain_embed = len(texts) / (time.perf_counter() - start)
    rows = pd.DataFrame(
        {"id": [str(i) for i in range(len(texts))], "content": texts, "content_hash": [""] * len(texts)}
    )
    start = time.perf_counter()
    embedded = list(embed_on_ray(rows, settings.index.embedding_model, layout, args.batch_size))
    rate = len(texts) / (time.perf_counter() - start)
    vectors = {i: v for b in embedded for i, v in zip(b["id"], b["embedding"], strict=True)}
    agree = float(np.mean([np.dot(vectors[str(n)], baseline[n]) for n in range(len(texts))]))
    print(f"{'embed only, plain':<30}{plain_embed:>10.1f} chunks/s  1.00x")
    print(
        f"{'embed only, on Ray':<30}{rate:>10.1f} chunks/s  {rate / plain_embed:.2f}x  "
        f"(mean cosine to baseline {agree:.4f})"
    )


if __name__ == "__main__":
    main()
