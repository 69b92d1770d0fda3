-- Approximate nearest-neighbour index for cosine search; m and ef_construction come from configuration.
CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw
    ON chunks USING hnsw (embedding vector_cosine_ops)
    WITH (m = {hnsw_m}, ef_construction = {hnsw_ef_construction});
