"""Chunks/s on a GPU, with no database: the bundled demo's OpenAlex abstracts, repeated to --documents, through
the same Ray pipelines the assets run (layout from the cluster: one actor per GPU), against in-process encoding.

    .venv/bin/python benchmarks/gpu_throughput.py [--documents 4000] [--out result.json]

Run by benchmarks/gpu.sh on a machine with a GPU; on a CPU-only machine it measures the CPU path the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dagster_project.chunker import ChunkerConfig, chunk_document
from dagster_project.core.embedder import DEFAULT_MODEL, load_model
from dagster_project.core.settings import REPO_ROOT
from dagster_project.embedding import chunk_and_embed_on_ray, cluster_layout, embed_on_ray
from dagster_project.resources.ray import ensure_ray

DEMO = REPO_ROOT / "dagster_project" / "sources" / "demo_data" / "openalex"


def demo_documents(n: int) -> pd.DataFrame:
    """(document_id, title, content) from the demo's OpenAlex pages, repeated to n documents."""
    works = []
    for page in sorted(DEMO.glob("works_page*.json")):
        for work in json.loads(page.read_text())["results"]:
            index = work.get("abstract_inverted_index")
            if not isinstance(index, dict):  # the demo carries malformed works on purpose
                continue
            words = sorted((p, w) for w, positions in index.items() for p in positions)
            if words:
                works.append((work.get("title") or "", " ".join(w for _, w in words)))
    rows = [works[i % len(works)] for i in range(n)]
    return pd.DataFrame({"document_id": range(n), "title": [t for t, _ in rows], "content": [c for _, c in rows]})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    documents = demo_documents(args.documents)
    config = ChunkerConfig()
    model = load_model(DEFAULT_MODEL, device)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(list(texts), batch_size=args.batch_size, normalize_embeddings=True,
                            show_progress_bar=False)

    encode(documents["content"].head(64).tolist())
    start = time.perf_counter()
    texts = [c for t, body in zip(documents["title"], documents["content"], strict=True)
             for c in chunk_document(t, body, encode, config)]
    encode(texts)
    plain = len(texts) / (time.perf_counter() - start)

    ensure_ray(os.environ.get("FLUX_RAY_ADDRESS"), os.cpu_count() or 2, Path(tempfile.mkdtemp(prefix="fr-")))
    layout = cluster_layout()
    start = time.perf_counter()
    fused = sum(len(d.texts) for d in chunk_and_embed_on_ray(documents, DEFAULT_MODEL, layout, args.batch_size,
                                                            config)) / (time.perf_counter() - start)
    rows = pd.DataFrame({"id": [str(i) for i in range(len(texts))], "content": texts, "content_hash": ""})
    start = time.perf_counter()
    embedded = sum(len(b["id"]) for b in embed_on_ray(rows, DEFAULT_MODEL, layout, args.batch_size))
    embed_rate = embedded / (time.perf_counter() - start)
    result = {"device": device, "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
              "documents": len(documents), "chunks": len(texts), "actors": layout.actors,
              "gpus_per_actor": layout.gpus_per_actor, "plain_chunks_per_s": round(plain, 1),
              "fused_ray_chunks_per_s": round(fused, 1), "embed_only_ray_chunks_per_s": round(embed_rate, 1),
              "fused_ratio": round(fused / plain, 2)}
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
