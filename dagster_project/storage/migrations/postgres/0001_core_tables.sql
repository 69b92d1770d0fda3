-- Core document store: one row per source record, chunks with their vectors, and the quarantine.
-- Placeholders in braces are integers from validated settings (never user text).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS documents (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type            TEXT        NOT NULL,
    source          TEXT        NOT NULL,
    external_id     TEXT        NOT NULL,
    title           TEXT        NOT NULL DEFAULT '',
    content         TEXT        NOT NULL DEFAULT '',
    metadata        JSONB       NOT NULL DEFAULT '{}'::jsonb,
    content_hash    TEXT        NOT NULL CHECK (length(content_hash) = 64),
    -- A record gone from its source is marked, never deleted (its citations must keep resolving).
    status          TEXT        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'gone')),
    dataset_version TEXT,
    first_seen_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    gone_at         TIMESTAMPTZ,
    CONSTRAINT documents_source_external_id_key UNIQUE (source, external_id)
);
CREATE INDEX IF NOT EXISTS documents_type_idx ON documents (type);

CREATE TABLE IF NOT EXISTS chunks (
    -- Deterministic: {source}_{external_id}_{chunk_index}
    id                    TEXT        PRIMARY KEY,
    document_id           BIGINT      NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    chunk_index           INTEGER     NOT NULL CHECK (chunk_index >= 0),
    content               TEXT        NOT NULL,
    content_hash          TEXT        NOT NULL CHECK (length(content_hash) = 64),
    token_count           INTEGER,
    embedding             vector({embedding_dim}),
    embedding_model       TEXT,
    -- The chunk content hash the vector was computed from: a stale vector is one whose hash differs.
    embedded_content_hash TEXT,
    provenance            JSONB       NOT NULL DEFAULT '{}'::jsonb,
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT chunks_document_chunk_key UNIQUE (document_id, chunk_index)
);

CREATE TABLE IF NOT EXISTS quarantine (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source        TEXT        NOT NULL,
    record_key    TEXT        NOT NULL,
    raw_ref       TEXT        NOT NULL,
    reason        TEXT        NOT NULL,
    payload       TEXT,
    run_id        TEXT,
    first_seen_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- A retry of the same bad record updates last_seen_at instead of adding a row.
    CONSTRAINT quarantine_record_reason_key UNIQUE (source, record_key, reason)
);
