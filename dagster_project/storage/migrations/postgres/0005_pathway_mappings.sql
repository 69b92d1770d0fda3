-- Reactome ↔ KEGG resolution: every scored pair that shares at least one protein, with its class.
CREATE TABLE IF NOT EXISTS pathway_mappings (
    reactome_id     TEXT             NOT NULL,
    kegg_id         TEXT             NOT NULL,
    reactome_size   INTEGER          NOT NULL CHECK (reactome_size > 0),
    kegg_size       INTEGER          NOT NULL CHECK (kegg_size > 0),
    shared          INTEGER          NOT NULL CHECK (shared > 0),
    overlap         DOUBLE PRECISION NOT NULL CHECK (overlap > 0 AND overlap <= 1),
    jaccard         DOUBLE PRECISION NOT NULL CHECK (jaccard > 0 AND jaccard <= 1),
    p_value         DOUBLE PRECISION NOT NULL CHECK (p_value >= 0 AND p_value <= 1),
    q_value         DOUBLE PRECISION NOT NULL CHECK (q_value >= 0 AND q_value <= 1),
    name_similarity DOUBLE PRECISION NOT NULL CHECK (name_similarity >= 0 AND name_similarity <= 1),
    relation        TEXT             NOT NULL CHECK (relation IN ('equivalent', 'part_of', 'unrelated')),
    direction       TEXT             NOT NULL DEFAULT '',
    dataset_version TEXT,
    PRIMARY KEY (reactome_id, kegg_id)
);
CREATE INDEX IF NOT EXISTS pathway_mappings_relation_idx ON pathway_mappings (relation);
