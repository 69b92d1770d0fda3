-- The retrieval scorecard's whole-document baseline: each document text's vector, by encoder and content hash, so
-- a re-evaluation encodes only the documents that are new or changed since the last one. float32 bytes, as the
-- encoder returns them (a cache read back exactly, not a searchable column).
CREATE TABLE IF NOT EXISTS eval_baseline_vectors (
    encoder TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedding BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (encoder, content_hash)
);
