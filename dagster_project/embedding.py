"""Embedding on Ray Data: one model copy per actor, GPUs when CUDA is there, batches streamed back to the caller.

Kept free of Dagster so the benchmark and the asset run exactly the same pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd


class EmbedBatch:
    """Ray Data actor: loads the model once, then encodes every batch it is handed."""

    def __init__(self, model_name: str, encode_batch_size: int, use_gpu: bool, threads: int) -> None:
        import torch

        from dagster_project.core.embedder import load_model

        if not use_gpu:
            torch.set_num_threads(max(1, threads))
        self.model = load_model(model_name, "cuda" if use_gpu else "cpu")
        self.encode_batch_size = encode_batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.model.encode(list(batch["content"]), batch_size=self.encode_batch_size,
                                    normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return {"id": batch["id"], "content_hash": batch["content_hash"], "embedding": vectors.astype(np.float32)}


def cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # a broken CUDA install must not stop a CPU run
        return False


def embed_on_ray(rows: pd.DataFrame, model_name: str, *, actors: int, batch_size: int, cpus_per_actor: int,
                 use_gpu: bool | None = None) -> Iterator[dict[str, np.ndarray]]:
    """Yield {'id', 'content_hash', 'embedding'} batches for `rows` (columns id, content, content_hash).

    Ray must already be initialised (RayResource.ensure / ensure_ray)."""
    import ray

    if rows.empty:
        return
    gpu = cuda_available() if use_gpu is None else use_gpu
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    # Many small input blocks, not one big one: outputs then stream back block by block, so vectors are written
    # (and progress shown) while later blocks are still being encoded.
    rows = rows[["id", "content", "content_hash"]].reset_index(drop=True)
    block = batch_size * 4
    dataset = ray.data.from_pandas([rows.iloc[i:i + block] for i in range(0, len(rows), block)])
    embedded = dataset.map_batches(
        EmbedBatch,
        fn_constructor_kwargs={"model_name": model_name, "encode_batch_size": batch_size, "use_gpu": gpu,
                               "threads": cpus_per_actor},
        batch_size=batch_size * 4,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_gpus=1 if gpu else 0,
        num_cpus=0 if gpu else cpus_per_actor,
    )
    yield from embedded.iter_batches(batch_size=batch_size * 4, batch_format="numpy", prefetch_batches=1)
