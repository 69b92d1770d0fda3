-- Each dbt model's last successful build: the digest of its definition (SQL, config, tests) and of each source
-- table it read. A dbt run leaves out the models whose definition and sources are unchanged since then.
CREATE TABLE IF NOT EXISTS dbt_model_builds (
    unique_id TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    source_digests JSONB NOT NULL,
    dagster_run_id TEXT,
    built_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
