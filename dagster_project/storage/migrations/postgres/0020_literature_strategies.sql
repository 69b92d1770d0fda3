-- Search strategies that passed the translation check, kept so that a rephrased literature question reuses the
-- final Entrez term instead of repeating the refinement calls. A question is matched by its distinctive tokens
-- (exactly: digits, capitals, rare words) and then by token overlap; the search itself always runs again, so a
-- count is never served from here.
CREATE TABLE IF NOT EXISTS literature_strategies (
    db TEXT NOT NULL,
    question_key TEXT NOT NULL,          -- the question's sorted tokens: one row per wording
    question TEXT NOT NULL,
    tokens TEXT[] NOT NULL,
    distinctive TEXT[] NOT NULL,         -- sorted, case-folded
    final_term TEXT NOT NULL,
    translation TEXT NOT NULL,
    record_count BIGINT,
    attempts INTEGER NOT NULL,           -- ESearch calls the strategy took to find (1 = no refinement)
    uses INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    PRIMARY KEY (db, question_key)
);
CREATE INDEX IF NOT EXISTS literature_strategies_distinctive ON literature_strategies (db, distinctive);

-- Serving asks the questions, so serving keeps the strategies: it reads and writes this table and nothing else new.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT SELECT, INSERT, UPDATE ON literature_strategies TO {serving_role};
    END IF;
END $$;

-- The literature-tools scorecard is stored beside the other three.
ALTER TABLE eval_runs DROP CONSTRAINT IF EXISTS eval_runs_scorecard_check;
ALTER TABLE eval_runs ADD CONSTRAINT eval_runs_scorecard_check
    CHECK (scorecard IN ('retrieval', 'answer', 'resolution', 'literature_tools'));
