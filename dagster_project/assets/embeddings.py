"""Stage 4 — vectors for every chunk that has none for its current text and the current model, computed on
Ray (one model per actor; GPUs when CUDA is there) and written in atomic COPY batches."""

import time

import dagster as dg
from sqlalchemy import text

from dagster_project.assets.chunks import INDEX_GROUP, chunks
from dagster_project.embedding import cuda_available, embed_on_ray
from dagster_project.resources import EmbedderResource, PostgresResource, RayResource
from dagster_project.resources.settings import FluxSettingsParam
from dagster_project.storage.chunks import chunks_to_embed, write_vectors


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"ray", "postgres"},
    deps=[chunks],
    description="Embeds, on Ray Data, the chunks with no vector for their current (content, model); changing the "
    "model re-embeds all, changing a document only its chunks, changing nothing embeds nothing. Vectors are "
    "written with COPY, one transaction per batch, stamped with the model name.",
)
def chunk_embeddings(context: dg.AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource,
                     ray: RayResource, settings: FluxSettingsParam) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    pending = chunks_to_embed(engine, embedder.model_name)
    with engine.connect() as conn:
        total = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
    context.log.info(f"{len(pending)} of {total} chunks need a vector for model {embedder.model_name}")
    written, started = 0, time.monotonic()
    if not pending.empty:
        ray.ensure()
        gpu = cuda_available()
        batches = embed_on_ray(pending, embedder.model_name, actors=settings.index.embedding_actors,
                               batch_size=embedder.batch_size, use_gpu=gpu,
                               cpus_per_actor=max(1, settings.ops.ray_num_cpus // settings.index.embedding_actors))
        for batch in batches:
            written += write_vectors(engine, list(batch["id"]), list(batch["content_hash"]), batch["embedding"],
                                     embedder.model_name)
            context.log.info(f"embedded {written}/{len(pending)} chunks")
    elapsed = time.monotonic() - started
    return dg.MaterializeResult(metadata={
        "model": embedder.model_name,
        "dimension": embedder.dimension,
        "chunks_embedded": written,
        "chunks_skipped": int(total - len(pending)),
        "seconds": round(elapsed, 2),
        "chunks_per_second": round(written / elapsed, 1) if written and elapsed else 0.0,
        "device": "cuda" if written and cuda_available() else "cpu",
        "actors": settings.index.embedding_actors,
    })
