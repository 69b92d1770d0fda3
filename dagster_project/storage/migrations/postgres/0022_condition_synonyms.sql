-- Other names of ClinVar's conditions, from MONDO (dagster_project/vocabularies/mondo.py): the question reader
-- grounds a condition named by any of them. Loaded with the conditions, in their transaction; a condition that
-- leaves ClinVar takes its synonyms with it.
CREATE TABLE IF NOT EXISTS condition_synonyms (
    concept_id         TEXT NOT NULL REFERENCES diseases (concept_id) ON DELETE CASCADE,
    synonym            TEXT NOT NULL CHECK (synonym <> ''),
    mondo_id           TEXT NOT NULL CHECK (mondo_id ~ '^MONDO:[0-9]{7}$'),
    vocabulary_version TEXT NOT NULL,
    PRIMARY KEY (concept_id, synonym)
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT SELECT ON condition_synonyms TO {serving_role};
    END IF;
END $$;
