-- Structured tables the later stages need (pathways, members, gene ids, reactions) and the raw-pull ledger.
CREATE TABLE IF NOT EXISTS raw_pulls (
    source        TEXT        NOT NULL,
    retrieved_at  TIMESTAMPTZ NOT NULL,
    release       TEXT        NOT NULL,
    mode          TEXT        NOT NULL CHECK (mode IN ('live', 'snapshot', 'demo')),
    manifest_uri  TEXT        NOT NULL,
    file_count    INTEGER     NOT NULL,
    byte_count    BIGINT      NOT NULL,
    PRIMARY KEY (source, retrieved_at)
);

CREATE TABLE IF NOT EXISTS pathways (
    pathway_id      TEXT        PRIMARY KEY,
    source          TEXT        NOT NULL CHECK (source IN ('reactome', 'kegg')),
    name            TEXT        NOT NULL,
    species         TEXT        NOT NULL,
    parents         TEXT[]      NOT NULL DEFAULT '{}',
    category        TEXT        NOT NULL DEFAULT '',
    subcategory     TEXT        NOT NULL DEFAULT '',
    row_hash        TEXT        NOT NULL,
    status          TEXT        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'gone')),
    dataset_version TEXT,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS pathways_source_idx ON pathways (source);

CREATE TABLE IF NOT EXISTS pathway_members (
    pathway_id  TEXT NOT NULL REFERENCES pathways (pathway_id) ON DELETE CASCADE,
    member_kind TEXT NOT NULL CHECK (member_kind IN ('gene', 'compound', 'reaction')),
    id_space    TEXT NOT NULL CHECK (id_space IN ('uniprot', 'chebi', 'entrez', 'hgnc_symbol', 'kegg_compound',
                                                  'reactome')),
    member_id   TEXT NOT NULL,
    PRIMARY KEY (pathway_id, member_kind, id_space, member_id)
);
CREATE INDEX IF NOT EXISTS pathway_members_member_idx ON pathway_members (id_space, member_id);

CREATE TABLE IF NOT EXISTS gene_identifiers (
    hgnc_id          TEXT        PRIMARY KEY,
    symbol           TEXT        NOT NULL,
    name             TEXT        NOT NULL DEFAULT '',
    status           TEXT        NOT NULL,
    aliases          TEXT[]      NOT NULL DEFAULT '{}',
    previous_symbols TEXT[]      NOT NULL DEFAULT '{}',
    entrez_id        TEXT,
    uniprot_ids      TEXT[]      NOT NULL DEFAULT '{}',
    locus_type       TEXT        NOT NULL DEFAULT '',
    row_hash         TEXT        NOT NULL,
    dataset_version  TEXT,
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS gene_identifiers_symbol_idx ON gene_identifiers (symbol);
CREATE INDEX IF NOT EXISTS gene_identifiers_entrez_idx ON gene_identifiers (entrez_id);
CREATE INDEX IF NOT EXISTS gene_identifiers_uniprot_idx ON gene_identifiers USING gin (uniprot_ids);

-- KEGG's own Entrez → UniProt conversion (conv/uniprot/hsa), when the pull has it.
CREATE TABLE IF NOT EXISTS kegg_gene_uniprot (
    entrez_id  TEXT NOT NULL,
    uniprot_id TEXT NOT NULL,
    PRIMARY KEY (entrez_id, uniprot_id)
);

CREATE TABLE IF NOT EXISTS reactions (
    reaction_id TEXT PRIMARY KEY,
    name        TEXT NOT NULL DEFAULT '',
    pathway_id  TEXT REFERENCES pathways (pathway_id) ON DELETE SET NULL,
    summary     TEXT NOT NULL DEFAULT ''
);
