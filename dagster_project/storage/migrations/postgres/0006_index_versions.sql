-- The retrieval index versions: one row per distinct (chunks+vectors, BM25 index, graph mapping) state that a
-- Dagster run published. Serving reads the most recently published row, so a half-built index is never queried.
CREATE TABLE IF NOT EXISTS index_versions (
    version          TEXT        PRIMARY KEY,
    bm25_version     TEXT        NOT NULL,
    bm25_path        TEXT        NOT NULL,
    embedding_model  TEXT        NOT NULL,
    chunk_count      INTEGER     NOT NULL,
    vector_count     INTEGER     NOT NULL,
    pathway_count    INTEGER     NOT NULL,
    dataset_version  TEXT        NOT NULL,
    pipeline_version TEXT        NOT NULL,
    dagster_run_id   TEXT        NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS index_versions_published_idx ON index_versions (published_at DESC);
