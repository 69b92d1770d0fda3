"""Stage 3 — semantic chunks of every active document, with their vectors, computed on Ray; only documents whose
content (or the chunker's settings) changed are re-chunked, each batch swapped in one transaction."""

import time

import dagster as dg
import numpy as np
import pandas as pd

from dagster_project.core.versions import pipeline_version
from dagster_project.defs.assets.documents import DOCUMENT_ASSETS
from dagster_project.defs.pools import RAY_POOL
from dagster_project.defs.resources import EmbedderResource, PostgresResource, RayResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.index.chunk_store import (
    DocumentToChunk,
    documents_to_chunk,
    remove_chunks_of_gone_documents,
    replace_chunks,
)
from dagster_project.index.chunker import ChunkerConfig
from dagster_project.index.ray_actors import ChunkedDocument, chunk_and_embed_on_ray, cluster_layout

INDEX_GROUP = "index"
DOCS_PER_TRANSACTION = 200


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"ray", "postgres"},
    pool=RAY_POOL,
    deps=[*(a.key for a in DOCUMENT_ASSETS), "postgres_schema"],
    description="Semantic chunks (sentence embeddings, breaks above the 75th percentile of consecutive cosine "
    "distances, min/max sizes, title kept with the first chunk; member lists packed) and their vectors, both "
    "encoded on Ray actors that load the model once. Re-chunks only documents whose content_hash or chunker "
    "settings changed; chunk ids are `{source}_{external_id}_{chunk_index}`.",
)
def chunks(
    context: dg.AssetExecutionContext,
    postgres: PostgresResource,
    embedder: EmbedderResource,
    ray: RayResource,
    settings: FluxSettingsParam,
) -> dg.MaterializeResult:
    config = ChunkerConfig(settings.index.chunk_min_chars, settings.index.chunk_max_chars)
    engine = postgres.get_engine()
    removed = remove_chunks_of_gone_documents(engine)
    pending = documents_to_chunk(engine, config.signature)
    context.log.info(f"{len(pending)} documents to (re-)chunk; removed {removed} chunks of gone documents")
    provenance = {"pipeline_version": pipeline_version(), "chunker": config.signature}
    by_id = {doc.id: doc for doc in pending}
    written = embedded = 0
    where: dict[str, set[str]] = {"nodes": set(), "devices": set()}
    started = time.monotonic()

    def flush(done: list[ChunkedDocument], empty: list[DocumentToChunk] | None = None) -> None:
        nonlocal written, embedded
        batch = [(by_id[d.document_id], d.texts) for d in done] + [(doc, []) for doc in empty or []]
        if not batch:
            return
        vectors = (embedder.model_name, np.concatenate([d.vectors for d in done])) if done else None
        chunk_count, vector_count = replace_chunks(engine, batch, config.signature, provenance, vectors)
        written, embedded = written + chunk_count, embedded + vector_count
        where["nodes"] |= {d.node_id for d in done}
        where["devices"] |= {d.device for d in done}

    layout = None
    if pending:
        ray.ensure()
        layout = cluster_layout(settings.index.embedding_actors, settings.index.embedding_cpus_per_actor)
        context.log.info(
            f"Ray layout: {layout.actors} actor(s) x {layout.cpus_per_actor} CPU, "
            f"{layout.gpus_per_actor} GPU each, over {len(layout.nodes)} node(s)"
        )
        frame = pd.DataFrame(
            {
                "document_id": [d.id for d in pending],
                "title": [d.title for d in pending],
                "content": [d.content for d in pending],
            }
        )
        done: list[ChunkedDocument] = []
        seen: set[int] = set()
        for document in chunk_and_embed_on_ray(frame, embedder.model_name, layout, embedder.batch_size, config):
            done.append(document)
            seen.add(document.document_id)
            if len(done) >= DOCS_PER_TRANSACTION:
                flush(done)
                done = []
                context.log.info(f"chunked {len(seen)}/{len(pending)} documents")
        flush(done, [doc for doc in pending if doc.id not in seen])  # documents with no text have no chunks
    elapsed = time.monotonic() - started
    return dg.MaterializeResult(
        metadata={
            "documents_chunked": len(pending),
            "chunks_written": written,
            "chunks_embedded": embedded,
            "chunks_removed_for_gone_documents": removed,
            "chunker": config.signature,
            "model": embedder.model_name,
            "seconds": round(elapsed, 2),
            "documents_per_second": round(len(pending) / elapsed, 1) if pending and elapsed else 0.0,
            "ray_actors": layout.actors if layout else 0,
            "ray_nodes": dg.MetadataValue.json(sorted(where["nodes"])),
            "device": ",".join(sorted(where["devices"])) or "none",
        }
    )
