"""Stage 4 — vectors for every chunk that has none for its current text and the current model (after a model
change; `chunks` embeds what it writes), computed on Ray (one model per actor, laid out from the cluster's own
resources) and written in atomic COPY batches."""

import time

import dagster as dg
from sqlalchemy import text

from dagster_project.defs.assets.chunks import INDEX_GROUP, chunks
from dagster_project.defs.pools import RAY_POOL
from dagster_project.defs.resources import EmbedderResource, PostgresResource, RayResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.chunk_store import chunks_to_embed, write_vectors
from dagster_project.index.ray_actors import cluster_layout, embed_on_ray


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"ray", "postgres"},
    pool=RAY_POOL,
    deps=[chunks],
    description="Embeds, on Ray Data, the chunks with no vector for their current (content, model): after a model "
    "change, all of them; normally none, since `chunks` embeds the chunks it writes. Vectors are written with COPY, "
    "one transaction per batch, stamped with the model name.",
)
def chunk_embeddings(
    context: dg.AssetExecutionContext,
    postgres: PostgresResource,
    embedder: EmbedderResource,
    ray: RayResource,
    settings: FluxSettingsParam,
) -> dg.MaterializeResult:
    engine = postgres.get_engine()
    pending = chunks_to_embed(engine, embedder.model_name)
    with engine.connect() as conn:
        total = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
    context.log.info(f"{len(pending)} of {total} chunks need a vector for model {embedder.model_name}")
    written, started = 0, time.monotonic()
    layout, nodes, devices = None, set(), set()
    if not pending.empty:
        ray.ensure()
        layout = cluster_layout(settings.index.embedding_actors, settings.index.embedding_cpus_per_actor)
        for batch in embed_on_ray(pending, embedder.model_name, layout, embedder.batch_size):
            written += write_vectors(
                engine, list(batch["id"]), list(batch["content_hash"]), batch["embedding"], embedder.model_name
            )
            nodes |= set(batch["node_id"])
            devices |= set(batch["device"])
            context.log.info(f"embedded {written}/{len(pending)} chunks")
    elapsed = time.monotonic() - started
    return dg.MaterializeResult(
        metadata={
            "model": embedder.model_name,
            "dimension": embedder.dimension,
            "chunks_embedded": written,
            "chunks_skipped": int(total - len(pending)),
            "seconds": round(elapsed, 2),
            "chunks_per_second": round(written / elapsed, 1) if written and elapsed else 0.0,
            "ray_actors": layout.actors if layout else 0,
            "ray_nodes": dg.MetadataValue.json(sorted(str(n) for n in nodes)),
            "device": ",".join(sorted(str(d) for d in devices)) or "none",
        }
    )
