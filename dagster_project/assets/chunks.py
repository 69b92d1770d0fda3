"""Stage 3 — semantic chunks of every active document; only documents whose content (or the chunker's
settings) changed are re-chunked, each batch swapped in one transaction."""

import time

import dagster as dg

from dagster_project.assets.documents import DOCUMENT_ASSETS
from dagster_project.chunker import ChunkerConfig, chunk_document
from dagster_project.core.versions import pipeline_version
from dagster_project.resources import EmbedderResource, PostgresResource
from dagster_project.resources.settings import FluxSettingsParam
from dagster_project.storage.chunks import documents_to_chunk, remove_chunks_of_gone_documents, replace_chunks

INDEX_GROUP = "index"
DOCS_PER_TRANSACTION = 200


@dg.asset(
    group_name=INDEX_GROUP,
    kinds={"postgres", "python"},
    deps=[*(a.key for a in DOCUMENT_ASSETS), "postgres_schema"],
    description="Semantic chunks (sentence embeddings, breaks above the 75th percentile of consecutive cosine "
    "distances, min/max sizes, title kept with the first chunk; member lists packed). Re-chunks only documents "
    "whose content_hash or chunker settings changed; chunk ids are {source}_{external_id}_{chunk_index}.",
)
def chunks(context: dg.AssetExecutionContext, postgres: PostgresResource,
           embedder: EmbedderResource, settings: FluxSettingsParam) -> dg.MaterializeResult:
    config = ChunkerConfig(settings.index.chunk_min_chars, settings.index.chunk_max_chars)
    engine = postgres.get_engine()
    removed = remove_chunks_of_gone_documents(engine)
    pending = documents_to_chunk(engine, config.signature)
    context.log.info(f"{len(pending)} documents to (re-)chunk; removed {removed} chunks of gone documents")
    model = embedder.model() if pending else None
    provenance = {"pipeline_version": pipeline_version(), "chunker": config.signature}
    written, started = 0, time.monotonic()
    for start in range(0, len(pending), DOCS_PER_TRANSACTION):
        batch = pending[start:start + DOCS_PER_TRANSACTION]
        pieces = [(doc, chunk_document(doc.title, doc.content, lambda s: model.encode(  # type: ignore[union-attr]
            list(s), batch_size=embedder.batch_size, normalize_embeddings=True, show_progress_bar=False), config))
            for doc in batch]
        written += replace_chunks(engine, pieces, config.signature, provenance)
        context.log.info(f"chunked {min(start + len(batch), len(pending))}/{len(pending)} documents")
    elapsed = time.monotonic() - started
    return dg.MaterializeResult(metadata={
        "documents_chunked": len(pending),
        "chunks_written": written,
        "chunks_removed_for_gone_documents": removed,
        "chunker": config.signature,
        "seconds": round(elapsed, 2),
        "documents_per_second": round(len(pending) / elapsed, 1) if pending and elapsed else 0.0,
    })
