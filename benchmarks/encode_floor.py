"""The encoder's floor for a cold build: the seconds the model needs for exactly the texts a cold `chunks` run must
encode, in one process, at the best batch size. Every other index figure in BENCHMARKS.md is a multiple of it.

    FLUX_HOME=.flux/bench FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/encode_floor.py \\
        [--sample 1500] [--batch-sizes 16,32,64,128,256] [--chunks-seconds 578]

Reads every active document from the platform database (materialize the sources first) and splits each one as the
chunker does. The texts to encode are every distinct sentence the percentile rule needs, then every distinct chunk
text that is not one of those sentences. A sample of each kind picks the batch size; then both full sets are
encoded once at that size, in one process with the model loaded before the clock. Sentence splitting (pysbd) is
timed apart: it is CPU work beside the encoder, not the encoder's. `--chunks-seconds` is the `chunks` step of a
cold build (`benchmarks/cold_build.py`); it is printed as a multiple of the floor.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dagster_project.index.chunker import ChunkerConfig, finish_document, plan_document

Encode = Callable[[list[str], int], np.ndarray]


def timed(encode: Encode, texts: list[str], batch_size: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = encode(texts, batch_size)
    return time.perf_counter() - start, vectors


def best_batch_size(encode: Encode, texts: list[str], sizes: list[int], sample: int) -> tuple[int, dict[int, float]]:
    """The batch size that encodes a random sample of `texts` fastest (texts per second per size)."""
    picked = random.Random(0).sample(texts, min(sample, len(texts)))
    rates = {size: len(picked) / timed(encode, picked, size)[0] for size in sizes}
    return max(rates, key=lambda size: rates[size]), rates


def measure(
    documents: Sequence[tuple[str, str]],
    config: ChunkerConfig,
    encode: Encode,
    sizes: list[int],
    sample: int,
    chunks_seconds: float | None = None,
) -> float:
    """Prints the floor for `documents` (title, content) with `encode`, and returns it in seconds."""
    encode(["warm-up"] * 64, 64)
    start = time.perf_counter()
    plans = [plan_document(content, config) for _, content in documents]
    split_seconds = time.perf_counter() - start
    sentences = list(dict.fromkeys(s for p in plans if p.needs_vectors for s in p.sentences))
    sentence_batch, sentence_rates = best_batch_size(encode, sentences, sizes, sample)
    sentence_seconds, vectors = timed(encode, sentences, sentence_batch)
    by_text = dict(zip(sentences, vectors, strict=True))
    start = time.perf_counter()
    chunk_texts = [
        t
        for (title, _), p in zip(documents, plans, strict=True)
        for t in finish_document(
            title, p, np.stack([by_text[s] for s in p.sentences]) if p.needs_vectors else None, config
        )
    ]
    finish_seconds = time.perf_counter() - start
    to_encode = [t for t in dict.fromkeys(chunk_texts) if t not in by_text]
    chunk_batch, chunk_rates = best_batch_size(encode, to_encode, sizes, sample)
    chunk_seconds, _ = timed(encode, to_encode, chunk_batch)
    floor = sentence_seconds + chunk_seconds

    print(
        f"{len(documents)} documents: {len(sentences)} distinct sentences for the percentile rule, "
        f"{len(chunk_texts)} chunks of which {len(to_encode)} texts to encode "
        f"({len(chunk_texts) - len(to_encode)} reuse a sentence's vector or repeat a chunk)"
    )
    for kind, rates in (("sentences", sentence_rates), ("chunk texts", chunk_rates)):
        print(f"batch-size sweep, {kind} (texts/s): " + ", ".join(f"{s}: {r:.0f}" for s, r in rates.items()))
    print(
        f"{'sentences, batch ' + str(sentence_batch):<28}{sentence_seconds:>8.1f} s  "
        f"({len(sentences) / sentence_seconds:.0f}/s, mean {np.mean([len(s) for s in sentences]):.0f} chars)"
    )
    print(
        f"{'chunk texts, batch ' + str(chunk_batch):<28}{chunk_seconds:>8.1f} s  "
        f"({len(to_encode) / chunk_seconds:.0f}/s, mean {np.mean([len(t) for t in to_encode]):.0f} chars)"
    )
    print(f"{'encoder floor':<28}{floor:>8.1f} s")
    print(f"{'beside it: sentence split':<28}{split_seconds:>8.1f} s  ({split_seconds / floor:.2f}x the floor)")
    print(f"{'beside it: chunk assembly':<28}{finish_seconds:>8.1f} s")
    if chunks_seconds:
        print(
            f"{'chunks step of a cold build':<28}{chunks_seconds:>8.1f} s  "
            f"= {chunks_seconds / floor:.2f}x the floor (goal ≤ 1.3x)"
        )
    return floor


def main() -> None:
    # The platform's modules are imported here, not above: gpu_floor.py reuses `measure` on a machine without them.
    from sqlalchemy import text

    from dagster_project.core.settings import get_settings
    from dagster_project.core.stores import engine_for
    from dagster_project.index.encoder import load_sentence_model

    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=1500, help="texts per kind for the batch-size sweep")
    parser.add_argument("--batch-sizes", default="16,32,64,128,256")
    parser.add_argument("--chunks-seconds", type=float, default=None, help="a cold build's `chunks` step")
    parser.add_argument(
        "--export",
        type=Path,
        default=None,
        help="write the documents and the chunker's settings to this JSON file (for gpu_floor.py) and stop",
    )
    args = parser.parse_args()
    settings = get_settings()
    with engine_for(settings.platform_database_url).connect() as conn:
        documents = [
            (d.title, d.content)
            for d in conn.execute(text("SELECT title, content FROM documents WHERE status = 'active'")).all()
        ]
    config = ChunkerConfig(settings.index.chunk_min_chars, settings.index.chunk_max_chars)
    if args.export:
        args.export.parent.mkdir(parents=True, exist_ok=True)
        args.export.write_text(
            json.dumps({"min_chars": config.min_chars, "max_chars": config.max_chars, "documents": documents})
        )
        print(f"{len(documents)} documents written to {args.export}")
        return
    model = load_sentence_model(settings.index.embedding_model)

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)

    measure(documents, config, encode, [int(s) for s in args.batch_sizes.split(",")], args.sample, args.chunks_seconds)


if __name__ == "__main__":
    main()
