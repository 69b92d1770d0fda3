"""The encoder's floor (encode_floor.py) on a GPU: the same documents, the same chunker, the same two sets of
texts, encoded on CUDA in half precision. For a machine with a GPU but without the platform (no database, no
Ray): the documents travel as the JSON `encode_floor.py --export` writes.

    .venv/bin/python benchmarks/encode_floor.py --export .gpu/documents.json      # where the platform is
    python3 benchmarks/gpu_floor.py .gpu/documents.json --model .gpu/model      # on the GPU machine

`--model` is a sentence-transformers folder (the 2-core figures use all-MiniLM-L6-v2 in float32; a float16 copy
of the same weights is what a GPU computes in anyway). Prints what encode_floor.py prints, for the sweep's batch
sizes, and writes $OUT/gpu_floor.txt when OUT is set.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, for the chunker

from encode_floor import measure

from dagster_project.index.chunker import ChunkerConfig


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    parser = argparse.ArgumentParser()
    parser.add_argument("documents", type=Path)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--batch-sizes", default="64,256,1024")
    parser.add_argument("--sample", type=int, default=4000)
    args = parser.parse_args()
    exported = json.loads(args.documents.read_text())
    config = ChunkerConfig(exported["min_chars"], exported["max_chars"])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(str(args.model), device=device)
    if device == "cuda":
        model.half()

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        vectors = model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)

    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
        print(f"device: {name}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
        measure(
            [tuple(d) for d in exported["documents"]],
            config,
            encode,
            [int(s) for s in args.batch_sizes.split(",")],
            args.sample,
        )
    print(report.getvalue())
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_floor.txt").write_text(report.getvalue())


if __name__ == "__main__":
    main()
