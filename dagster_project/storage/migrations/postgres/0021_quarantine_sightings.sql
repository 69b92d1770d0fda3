-- When a quarantined record was met, one row per raw pull that held it: a rerun over the same pull changes no row,
-- and a new pull that still holds the bad record adds one sighting instead of rewriting the quarantine row (whose
-- raw_ref and run_id stay those of the first sighting).
CREATE TABLE IF NOT EXISTS quarantine_sightings (
    quarantine_id BIGINT      NOT NULL REFERENCES quarantine (id) ON DELETE CASCADE,
    raw_ref       TEXT        NOT NULL,
    run_id        TEXT,
    seen_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (quarantine_id, raw_ref)
);

DO $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM information_schema.columns WHERE table_name = 'quarantine' AND column_name = 'last_seen_at'
    ) THEN
        INSERT INTO quarantine_sightings (quarantine_id, raw_ref, run_id, seen_at)
        SELECT id, raw_ref, run_id, last_seen_at FROM quarantine
        ON CONFLICT DO NOTHING;
        ALTER TABLE quarantine DROP COLUMN last_seen_at;
    END IF;
END
$$;
