"""All model work on Ray: actors that load the model once, laid out from the resources of the cluster joined.

Two pipelines share the actors' shape: `chunk_and_embed_on_ray` (documents → sentences → sentence vectors →
percentile split → chunk texts → chunk vectors, for the `chunks` asset) and `embed_on_ray` (chunk texts → vectors,
for chunks that lack a vector for the current model). Kept free of Dagster, so benchmarks and assets run the same
code. Ray must already be initialised (RayResource.ensure / ensure_ray).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dagster_project.index.chunker import ChunkerConfig, chunk_block, plan_document

MAX_THREADS_PER_ACTOR = 4  # past this, one more actor beats more threads for a MiniLM-sized model
BLOCKS_PER_ACTOR = 4  # small inputs are still cut so that every actor gets work
ACTOR_START_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RayLayout:
    """How many model copies, and what each one asks the cluster for."""

    actors: int
    cpus_per_actor: int
    gpus_per_actor: int = 0
    nodes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def device(self) -> str:
        return "cuda" if self.gpus_per_actor else "cpu"


def plan_layout(nodes: list[dict[str, Any]], actors: int | None = None, cpus_per_actor: int | None = None) -> RayLayout:
    """The layout for the alive nodes of the cluster joined (`ray.nodes()`), as the cluster sees them — not as the
    driver's own CUDA does: one actor per GPU when the cluster has GPUs; else actors whose threads fit the smallest
    node, as many as the nodes' CPUs hold (so no actor waits for CPUs that no node has). Settings override."""
    alive = [n for n in nodes if n.get("Alive", True)]
    node_cpus = [int(n.get("Resources", {}).get("CPU", 0)) for n in alive] or [1]
    gpus = sum(int(n.get("Resources", {}).get("GPU", 0)) for n in alive)
    ids = tuple(str(n.get("NodeID", "")) for n in alive)
    if gpus:
        return RayLayout(actors=actors or gpus, cpus_per_actor=1, gpus_per_actor=1, nodes=ids)
    smallest = max(1, min(c for c in node_cpus if c > 0) if any(node_cpus) else 1)
    threads = cpus_per_actor or min(smallest, MAX_THREADS_PER_ACTOR)
    fitting = sum(c // threads for c in node_cpus)
    return RayLayout(actors=actors or max(1, fitting), cpus_per_actor=threads, nodes=ids)


def cluster_layout(actors: int | None = None, cpus_per_actor: int | None = None) -> RayLayout:
    import ray

    return plan_layout(ray.nodes(), actors, cpus_per_actor)


class _ModelActor:
    """Loads the model once per actor, on the device its layout gave it."""

    def __init__(self, model_name: str, encode_batch_size: int, use_gpu: bool, threads: int) -> None:
        import ray

        from dagster_project.index.encoder import load_sentence_model

        # CPU threads: Ray sets OMP_NUM_THREADS to the actor's num_cpus (`threads`), which torch reads. Calling
        # torch.set_num_threads again here measured 25 % slower on 2 cores (18.8 s vs 14.2 s, same work).
        del threads
        self.device = "cuda" if use_gpu else "cpu"
        self.model = load_sentence_model(model_name, self.device)
        self.encode_batch_size = encode_batch_size
        self.node_id = ray.get_runtime_context().get_node_id()

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts,
            batch_size=self.encode_batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)

    def map(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The same work as a plain actor method (ray.util.ActorPool calls methods, Ray Data calls the object)."""
        return self(batch)  # type: ignore[operator]

    def where(self, rows: int) -> dict[str, np.ndarray]:
        return {
            "node_id": np.array([self.node_id] * rows, dtype=object),
            "device": np.array([self.device] * rows, dtype=object),
        }


class EmbedBatch(_ModelActor):
    """Chunk texts → vectors."""

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.encode(list(batch["content"]))
        return {
            "id": batch["id"],
            "content_hash": batch["content_hash"],
            "embedding": vectors,
            **self.where(len(vectors)),
        }


class ChunkAndEmbed(_ModelActor):
    """Documents → chunk texts (semantic split on sentence vectors) → chunk vectors, one model for both encodes,
    each over the whole block (`chunk_block`).

    Every document's chunks leave in the same output batch, each row carrying the document's chunk count so the
    driver can tell when a document is complete whatever batches Ray hands it."""

    def __init__(
        self, model_name: str, encode_batch_size: int, use_gpu: bool, threads: int, min_chars: int, max_chars: int
    ) -> None:
        super().__init__(model_name, encode_batch_size, use_gpu, threads)
        self.config = ChunkerConfig(min_chars, max_chars)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        pairs = [(str(t), str(c)) for t, c in zip(batch["title"], batch["content"], strict=True)]
        plans = list(batch["plan"]) if "plan" in batch else None  # split by the driver, beside the model
        chunked, vectors = chunk_block(
            pairs, lambda s: self.encode(list(s)), self.config, self.model.get_sentence_embedding_dimension(), plans
        )
        documents, indexes, totals = [], [], []
        for document, chunks in zip(batch["document_id"], chunked, strict=True):
            documents += [int(document)] * len(chunks)
            indexes += list(range(len(chunks)))
            totals += [len(chunks)] * len(chunks)
        texts = [text for chunks in chunked for text in chunks]
        return {
            "document_id": np.array(documents, dtype=np.int64),
            "chunk_index": np.array(indexes, dtype=np.int64),
            "chunk_total": np.array(totals, dtype=np.int64),
            "content": np.array(texts, dtype=object),
            "embedding": vectors,
            **self.where(len(texts)),
        }


def _map_on_actors(
    rows: pd.DataFrame,
    actor: type[_ModelActor],
    kwargs: dict[str, Any],
    layout: RayLayout,
    rows_per_block: int,
    batch_size: int,
) -> Iterator[dict[str, np.ndarray]]:
    import ray

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    # Dispatch starts once every actor has loaded its model, so the first one ready does not take all the work
    # (and a cluster without room for the pool fails with a clear timeout instead of waiting for ever).
    ctx.wait_for_min_actors_s = ACTOR_START_TIMEOUT_S
    # Many small input blocks, not one big one: outputs stream back block by block, so results are written (and
    # progress shown) while later blocks are still being encoded, and every actor gets several blocks.
    rows = rows.reset_index(drop=True)
    rows_per_block = max(1, min(rows_per_block, -(-len(rows) // (layout.actors * BLOCKS_PER_ACTOR))))
    blocks = [rows.iloc[i : i + rows_per_block] for i in range(0, len(rows), rows_per_block)]
    mapped = ray.data.from_pandas(blocks).map_batches(
        actor,
        fn_constructor_kwargs={**kwargs, "use_gpu": bool(layout.gpus_per_actor), "threads": layout.cpus_per_actor},
        batch_size=rows_per_block,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=layout.actors, max_tasks_in_flight_per_actor=2),
        num_gpus=layout.gpus_per_actor,
        num_cpus=layout.cpus_per_actor if not layout.gpus_per_actor else 1,
    )
    yield from mapped.iter_batches(batch_size=batch_size, batch_format="numpy", prefetch_batches=1)


def embed_on_ray(
    rows: pd.DataFrame, model_name: str, layout: RayLayout, batch_size: int
) -> Iterator[dict[str, np.ndarray]]:
    """{'id', 'content_hash', 'embedding', 'node_id', 'device'} batches for `rows` (id, content, content_hash)."""
    if rows.empty:
        return
    yield from _map_on_actors(
        rows[["id", "content", "content_hash"]],
        EmbedBatch,
        {"model_name": model_name, "encode_batch_size": batch_size},
        layout,
        rows_per_block=batch_size * 4,
        batch_size=batch_size * 4,
    )


@dataclass
class ChunkedDocument:
    document_id: int
    texts: list[str]
    vectors: np.ndarray
    node_id: str
    device: str


def start_chunk_actors(model_name: str, layout: RayLayout, batch_size: int, config: ChunkerConfig) -> list[Any]:
    """The layout's `ChunkAndEmbed` actors, returned once every one has loaded its model (so the first one up does
    not take all the work, and a cluster without room for them fails clearly instead of waiting for ever)."""
    import ray
    from ray.exceptions import GetTimeoutError

    remote = ray.remote(
        num_cpus=layout.cpus_per_actor if not layout.gpus_per_actor else 1, num_gpus=layout.gpus_per_actor
    )(ChunkAndEmbed)
    actors = [
        remote.remote(
            model_name,
            batch_size,
            bool(layout.gpus_per_actor),
            layout.cpus_per_actor,
            config.min_chars,
            config.max_chars,
        )
        for _ in range(layout.actors)
    ]
    try:
        ray.get([actor.where.remote(0) for actor in actors], timeout=ACTOR_START_TIMEOUT_S)
    except GetTimeoutError:
        release(actors)
        raise RuntimeError(
            f"{layout.actors} Ray actor(s) asking {layout.cpus_per_actor} CPU / {layout.gpus_per_actor} GPU each "
            f"did not start within {ACTOR_START_TIMEOUT_S:.0f} s; the cluster has {ray.cluster_resources()} "
            "(set FLUX_EMBEDDING_ACTORS / FLUX_EMBEDDING_CPUS_PER_ACTOR to fit it)"
        ) from None
    return actors


def chunk_and_embed_on_ray(
    documents: pd.DataFrame,
    model_name: str,
    layout: RayLayout,
    batch_size: int,
    config: ChunkerConfig,
    documents_per_block: int = 128,
    actors: list[Any] | None = None,
) -> Iterator[ChunkedDocument]:
    """Each document of `documents` (document_id, title, content) with its chunk texts and their vectors, as soon
    as its block comes back. Runs on `actors` when given (the caller keeps them), else on actors of its own.

    Plain Ray actors in a `ray.util.ActorPool`, not Ray Data: a block's work (two encodes per document) is large
    next to its transfer, and Ray Data's executor cost 2.5x the encoding time on 2 cores (BENCHMARKS.md)."""
    from ray.util import ActorPool

    if documents.empty:
        return
    own = actors is None
    pool = start_chunk_actors(model_name, layout, batch_size, config) if actors is None else actors
    per_block = max(1, min(documents_per_block, -(-len(documents) // (len(pool) * BLOCKS_PER_ACTOR))))
    columns = {name: documents[name].to_numpy() for name in ("document_id", "title", "content")}
    blocks = (
        {name: values[i : i + per_block] for name, values in columns.items()}
        for i in range(0, len(documents), per_block)
    )
    try:
        # The pool takes a block as soon as it is planned: the driver splits the next blocks into sentences
        # while the actors encode the first ones.
        for batch in ActorPool(pool).map_unordered(
            lambda actor, block: actor.map.remote(block), _planned(blocks, config)
        ):
            yield from _documents_in(batch)
    finally:
        if own:
            release(pool)


def _planned(blocks: Iterator[dict[str, np.ndarray]], config: ChunkerConfig) -> Iterator[dict[str, np.ndarray]]:
    for block in blocks:
        plans = np.empty(len(block["content"]), dtype=object)
        plans[:] = [plan_document(str(content), config) for content in block["content"]]
        yield block | {"plan": plans}


def release(actors: list[Any]) -> None:
    """Stop actors (and give their CPUs or GPUs back to the cluster)."""
    import ray

    for actor in actors:
        ray.kill(actor)


def _documents_in(batch: dict[str, np.ndarray]) -> Iterator[ChunkedDocument]:
    """A block's rows, grouped back into documents (every document's chunks leave in its block's batch)."""
    pending: dict[int, list[tuple[int, str, np.ndarray]]] = {}
    for document, index, total, text, vector in zip(
        batch["document_id"],
        batch["chunk_index"],
        batch["chunk_total"],
        batch["content"],
        batch["embedding"],
        strict=True,
    ):
        parts = pending.setdefault(int(document), [])
        parts.append((int(index), str(text), vector))
        if len(parts) == int(total):
            parts.sort(key=lambda p: p[0])
            del pending[int(document)]
            yield ChunkedDocument(
                int(document),
                [p[1] for p in parts],
                np.stack([p[2] for p in parts]),
                str(batch["node_id"][0]),
                str(batch["device"][0]),
            )
    if pending:
        raise RuntimeError(f"Ray returned part of the chunks of {len(pending)} documents")
