-- Index versions become candidates first and are published only after the eval gates pass.
ALTER TABLE index_versions ADD COLUMN IF NOT EXISTS candidate_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE index_versions ALTER COLUMN published_at DROP NOT NULL;
ALTER TABLE index_versions ALTER COLUMN published_at DROP DEFAULT;

-- Eval scorecards: one row per scorecard per Dagster run (a retry of the same run updates it), and one row per
-- question and variant. `accepted` marks the baseline the regression checks compare against.
CREATE TABLE IF NOT EXISTS eval_runs (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scorecard        TEXT        NOT NULL CHECK (scorecard IN ('retrieval', 'answer', 'resolution')),
    dagster_run_id   TEXT        NOT NULL,
    index_version    TEXT        NOT NULL,
    dataset_version  TEXT        NOT NULL,
    pipeline_version TEXT        NOT NULL,
    params           JSONB       NOT NULL DEFAULT '{}'::jsonb,
    metrics          JSONB       NOT NULL,
    mlflow_run_id    TEXT,
    accepted         BOOLEAN     NOT NULL DEFAULT false,
    accepted_at      TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT eval_runs_scorecard_run_key UNIQUE (scorecard, dagster_run_id)
);
CREATE INDEX IF NOT EXISTS eval_runs_scorecard_created_idx ON eval_runs (scorecard, created_at DESC);

CREATE TABLE IF NOT EXISTS eval_question_results (
    eval_run_id BIGINT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    question_id TEXT   NOT NULL,
    variant     TEXT   NOT NULL,
    question    TEXT   NOT NULL,
    result      JSONB  NOT NULL,
    PRIMARY KEY (eval_run_id, question_id, variant)
);
