"""Ray embedding path vs a plain in-process SentenceTransformer.encode on the same real chunks.

    FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/embedding_throughput.py [--limit 5000]

Reads chunk texts from the platform database (materialize the snapshot index first), encodes them once with
`model.encode` in this process (the baseline) and once through `embed_on_ray` exactly as the chunk_embeddings
asset does, for each actor layout, and prints chunks/s and the ratio to the baseline. Timings include the Ray
actors' model load, which the baseline does not pay (its model is loaded before the clock starts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sqlalchemy import text

from dagster_project.core.embedder import load_model
from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for
from dagster_project.embedding import cuda_available, embed_on_ray
from dagster_project.resources.ray import ensure_ray


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    settings = get_settings()
    with engine_for(settings.platform_database_url).connect() as conn:
        rows = pd.read_sql(text("SELECT id, content, content_hash FROM chunks ORDER BY id LIMIT :n"), conn,
                           params={"n": args.limit})
    if len(rows) < args.limit:
        print(f"warning: only {len(rows)} chunks in {settings.postgres.pg_database}")
    texts = rows["content"].tolist()
    print(f"{len(texts)} chunks, mean {np.mean([len(t) for t in texts]):.0f} chars, cuda={cuda_available()}")

    model = load_model(settings.index.embedding_model)
    model.encode(texts[:64], batch_size=args.batch_size)  # warm-up: the first call is always slower
    start = time.perf_counter()
    baseline = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True)
    plain_rate = len(texts) / (time.perf_counter() - start)
    print(f"{'plain encode':<28}{plain_rate:>10.1f} chunks/s  1.00x")

    ensure_ray(settings.resolved_ray_address, settings.ops.ray_num_cpus, settings.home / "ray")
    for actors in args.actors:
        start = time.perf_counter()
        out = list(embed_on_ray(rows, settings.index.embedding_model, actors=actors, batch_size=args.batch_size,
                                cpus_per_actor=max(1, settings.ops.ray_num_cpus // actors)))
        rate = len(texts) / (time.perf_counter() - start)
        vectors = dict(zip([i for b in out for i in b["id"]], [v for b in out for v in b["embedding"]], strict=True))
        agree = float(np.mean([np.dot(vectors[i], baseline[n]) for n, i in enumerate(rows["id"])]))
        print(f"{f'ray, {actors} actor(s)':<28}{rate:>10.1f} chunks/s  {rate / plain_rate:.2f}x  "
              f"(mean cosine to baseline {agree:.4f})")


if __name__ == "__main__":
    main()
