-- The retrieval scorecard's query vectors, by encoder (model, dimension and query prefix) and query hash: a
-- re-evaluation after a refresh (a new candidate index, the same questions) encodes only the questions that are new.
-- float32 bytes, as the encoder returns them. Questions no longer asked are dropped by the scorecard.
CREATE TABLE IF NOT EXISTS eval_query_vectors (
    encoder TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    embedding BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (encoder, query_hash)
);
