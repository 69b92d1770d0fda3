-- ClinVar's gene-condition associations. A condition is a MedGen concept (C0271742, or CN… for one NCBI made up),
-- with the MONDO and OMIM ids its asserting sources give; an association is one (HGNC gene, concept, asserting
-- source) as ClinVar's gene_condition_source_id lists it. Both tables hold exactly the served ClinVar release.
CREATE TABLE IF NOT EXISTS diseases (
    concept_id      TEXT        PRIMARY KEY CHECK (concept_id ~ '^CN?[0-9]+$'),
    name            TEXT        NOT NULL CHECK (name <> ''),
    mondo_id        TEXT        CHECK (mondo_id ~ '^MONDO:[0-9]{7}$'),
    omim_id         TEXT        CHECK (omim_id ~ '^[0-9]{6}$'),
    row_hash        TEXT        NOT NULL,
    dataset_version TEXT,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS diseases_mondo_idx ON diseases (mondo_id);
CREATE INDEX IF NOT EXISTS diseases_omim_idx ON diseases (omim_id);

CREATE TABLE IF NOT EXISTS disease_associations (
    hgnc_id         TEXT        NOT NULL REFERENCES gene_identifiers (hgnc_id),
    concept_id      TEXT        NOT NULL REFERENCES diseases (concept_id),
    source_name     TEXT        NOT NULL DEFAULT '',  -- '' where ClinVar names no asserting source
    entrez_id       TEXT        NOT NULL CHECK (entrez_id ~ '^[0-9]+$'),
    gene_symbol     TEXT        NOT NULL CHECK (gene_symbol <> ''),  -- as ClinVar wrote it
    disease_name    TEXT        NOT NULL,  -- as this row of ClinVar's file wrote it
    source_id       TEXT        NOT NULL DEFAULT '',
    disease_mim     TEXT        NOT NULL DEFAULT '',
    relation        TEXT        NOT NULL CHECK (relation IN ('associated', 'related')),
    last_updated    DATE,
    row_hash        TEXT        NOT NULL,
    dataset_version TEXT,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (hgnc_id, concept_id, source_name)
);
CREATE INDEX IF NOT EXISTS disease_associations_concept_idx ON disease_associations (concept_id);

-- A ClinVar release as it was kept: its associations keyed by ClinVar's own ids (NCBI Gene, MedGen concept, asserting
-- source), so two releases compare without HGNC in between.
CREATE TABLE IF NOT EXISTS release_associations (
    release_id   BIGINT NOT NULL REFERENCES source_releases (release_id) ON DELETE CASCADE,
    entrez_id    TEXT   NOT NULL,
    concept_id   TEXT   NOT NULL,
    source_name  TEXT   NOT NULL,
    gene_symbol  TEXT   NOT NULL,
    disease_name TEXT   NOT NULL,
    PRIMARY KEY (release_id, entrez_id, concept_id, source_name)
);
ALTER TABLE source_releases ADD COLUMN IF NOT EXISTS association_count INTEGER NOT NULL DEFAULT 0
    CHECK (association_count >= 0);

-- ClinVar's releases are compared too: its source name and change kinds join the ones 0016 allows.
ALTER TABLE release_changes DROP CONSTRAINT IF EXISTS release_changes_source_check;
ALTER TABLE release_changes ADD CONSTRAINT release_changes_source_check
    CHECK (source IN ('reactome', 'kegg', 'hgnc', 'clinvar', 'resolution'));
ALTER TABLE release_changes DROP CONSTRAINT IF EXISTS release_changes_change_kind_check;
ALTER TABLE release_changes ADD CONSTRAINT release_changes_change_kind_check CHECK (change_kind IN (
    'pathway_added', 'pathway_removed', 'pathway_renamed', 'members_changed',
    'gene_added', 'gene_removed', 'gene_renamed',
    'edge_appeared', 'edge_disappeared', 'edge_reclassified',
    'association_added', 'association_removed'));

-- Serving reads the associations, the conditions and the kept ClinVar releases, never writes them.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT SELECT ON diseases, disease_associations, release_associations TO {serving_role};
    END IF;
END $$;
