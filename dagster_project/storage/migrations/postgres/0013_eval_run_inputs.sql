-- A scorecard's inputs (candidate index, dataset, question set, pipeline version, model and settings) as one
-- fingerprint: a run whose inputs match an earlier run's reuses that result instead of re-evaluating, and says so.
ALTER TABLE eval_runs ADD COLUMN IF NOT EXISTS input_fingerprint TEXT;
ALTER TABLE eval_runs ADD COLUMN IF NOT EXISTS reused_from BIGINT REFERENCES eval_runs (id) ON DELETE SET NULL;
CREATE INDEX IF NOT EXISTS eval_runs_fingerprint_idx ON eval_runs (scorecard, input_fingerprint, created_at DESC);
