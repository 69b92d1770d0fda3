-- Blue/green retrieval index: every index version serves from its own immutable chunk table in schema
-- flux_index (chunk text, source, title and vector, with its own HNSW index), built beside the published one and
-- switched to by publishing its index_versions row. The working `chunks` table is where loads and embeddings
-- happen; nothing serves from it, so it needs no ANN index of its own.
CREATE SCHEMA IF NOT EXISTS flux_index;
DROP INDEX IF EXISTS chunks_embedding_hnsw;
ALTER TABLE index_versions ADD COLUMN IF NOT EXISTS chunk_table TEXT;
-- A rollback marks the version it leaves; garbage collection marks versions whose table it dropped.
ALTER TABLE index_versions ADD COLUMN IF NOT EXISTS rolled_back_at TIMESTAMPTZ;
ALTER TABLE index_versions ADD COLUMN IF NOT EXISTS dropped_at TIMESTAMPTZ;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT USAGE ON SCHEMA flux_index TO {serving_role};
        -- Tables the platform role creates there later are readable by serving, and only readable.
        ALTER DEFAULT PRIVILEGES IN SCHEMA flux_index GRANT SELECT ON TABLES TO {serving_role};
    END IF;
END $$;
