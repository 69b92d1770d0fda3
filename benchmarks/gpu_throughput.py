"""The fused chunk+embed stage on Ray against the same two encodes in-process, with no database: the bundled
demo's OpenAlex abstracts, repeated to --documents, through the pipelines the assets run (layout from the cluster
joined: one actor per GPU, else CPU actors that fit its nodes).

    .venv/bin/python benchmarks/gpu_throughput.py [--documents 4000] [--out result.json]
    FLUX_RAY_ADDRESS=127.0.0.1:6379 .venv/bin/python benchmarks/gpu_throughput.py   # an existing cluster

Two ratios, both Ray over in-process (higher is better for Ray):
  warm   the work alone: actors already up with their model loaded vs the model already loaded in this process;
  cold   the stage as a materialization pays it: Ray actor start + model load + work vs model load in a fresh
         Python process (measured in a subprocess) + work.
Run by benchmarks/gpu.sh on a machine with a GPU; on a CPU-only machine it measures the CPU path the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dagster_project.core.settings import REPO_ROOT
from dagster_project.defs.resources.ray import ensure_ray
from dagster_project.index.chunker import ChunkerConfig, chunk_document
from dagster_project.index.encoder import DEFAULT_MODEL, load_sentence_model
from dagster_project.index.ray_actors import (
    chunk_and_embed_on_ray,
    cluster_layout,
    embed_on_ray,
    release,
    start_chunk_actors,
)

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


def fresh_process_load_seconds(device: str) -> float:
    """Import + model load in a new Python process: what an in-process Dagster step would pay first."""
    code = (
        "import time; t = time.perf_counter();"
        " from dagster_project.index.encoder import DEFAULT_MODEL, load_sentence_model;"
        f" load_sentence_model(DEFAULT_MODEL, {device!r}); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    return float(out.stdout.strip().splitlines()[-1])


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
    plain_load = fresh_process_load_seconds(device)
    model = load_sentence_model(DEFAULT_MODEL, device)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(list(texts), batch_size=args.batch_size, normalize_embeddings=True, show_progress_bar=False)

    encode(documents["content"].head(64).tolist())
    start = time.perf_counter()
    texts = [
        c
        for t, body in zip(documents["title"], documents["content"], strict=True)
        for c in chunk_document(t, body, encode, config)
    ]
    encode(texts)
    plain_work = time.perf_counter() - start

    ensure_ray(os.environ.get("FLUX_RAY_ADDRESS"), os.cpu_count() or 2, Path(tempfile.mkdtemp(prefix="fr-")))
    layout = cluster_layout()
    start = time.perf_counter()
    actors = start_chunk_actors(DEFAULT_MODEL, layout, args.batch_size, config)
    ray_start = time.perf_counter() - start
    start = time.perf_counter()
    chunked = list(chunk_and_embed_on_ray(documents, DEFAULT_MODEL, layout, args.batch_size, config, actors=actors))
    ray_work = time.perf_counter() - start
    release(actors)  # their CPUs (or GPUs) go back for the embed-only pipeline below
    rows = pd.DataFrame({"id": [str(i) for i in range(len(texts))], "content": texts, "content_hash": ""})
    start = time.perf_counter()
    embedded = sum(len(b["id"]) for b in embed_on_ray(rows, DEFAULT_MODEL, layout, args.batch_size))
    embed_rate = embedded / (time.perf_counter() - start)
    result = {
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "documents": len(documents),
        "chunks": len(texts),
        "actors": layout.actors,
        "cpus_per_actor": layout.cpus_per_actor,
        "gpus_per_actor": layout.gpus_per_actor,
        "nodes": len({d.node_id for d in chunked}),
        "plain_model_load_s": round(plain_load, 1),
        "plain_work_s": round(plain_work, 1),
        "ray_actor_start_s": round(ray_start, 1),
        "ray_work_s": round(ray_work, 1),
        "plain_chunks_per_s": round(len(texts) / plain_work, 1),
        "fused_ray_chunks_per_s": round(len(texts) / ray_work, 1),
        "embed_only_ray_chunks_per_s_with_start": round(embed_rate, 1),
        "fused_ratio_warm": round(plain_work / ray_work, 2),
        "fused_ratio_cold": round((plain_load + plain_work) / (ray_start + ray_work), 2),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
