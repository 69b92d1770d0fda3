-- Source releases kept side by side: what each release of each source said (pathways, names, gene members, HGNC
-- genes) and what each resolution concluded, so a refresh can be compared with what it replaces. A release is
-- keyed by its label and a digest of its files: the same files are the same release, however often they are pulled.
CREATE TABLE IF NOT EXISTS source_releases (
    release_id      BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- what the fact tables carry, not the key
    source          TEXT        NOT NULL,
    release_key     TEXT        NOT NULL,
    release         TEXT        NOT NULL,
    dataset_version TEXT        NOT NULL,
    mode            TEXT        NOT NULL,
    first_loaded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    served_at       TIMESTAMPTZ,
    pathway_count   INTEGER     NOT NULL DEFAULT 0 CHECK (pathway_count >= 0),
    member_count    INTEGER     NOT NULL DEFAULT 0 CHECK (member_count >= 0),
    gene_count      INTEGER     NOT NULL DEFAULT 0 CHECK (gene_count >= 0),
    UNIQUE (source, release_key)
);

CREATE TABLE IF NOT EXISTS release_pathways (
    release_id BIGINT NOT NULL REFERENCES source_releases (release_id) ON DELETE CASCADE,
    pathway_id TEXT   NOT NULL,
    name       TEXT,            -- NULL: the release's files name no name for it
    parents    TEXT[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (release_id, pathway_id)
);

-- Gene members only: the identifier spaces differ between releases (UniProt, Entrez, HGNC symbols) and are
-- compared through HGNC; compounds and reactions are not compared.
CREATE TABLE IF NOT EXISTS release_members (
    release_id BIGINT NOT NULL,
    pathway_id TEXT   NOT NULL,
    id_space   TEXT   NOT NULL,
    member_id  TEXT   NOT NULL,
    PRIMARY KEY (release_id, pathway_id, id_space, member_id),
    FOREIGN KEY (release_id, pathway_id) REFERENCES release_pathways (release_id, pathway_id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS release_genes (
    release_id       BIGINT NOT NULL REFERENCES source_releases (release_id) ON DELETE CASCADE,
    hgnc_id          TEXT   NOT NULL,
    symbol           TEXT   NOT NULL,
    previous_symbols TEXT[] NOT NULL DEFAULT '{}',
    entrez_id        TEXT,
    uniprot_ids      TEXT[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (release_id, hgnc_id)
);

-- The resolution's conclusions per build: its key names the source releases it read and the method version.
CREATE TABLE IF NOT EXISTS resolution_releases (
    release_key     TEXT        PRIMARY KEY,
    source_keys     JSONB       NOT NULL,
    method_version  TEXT        NOT NULL,
    first_loaded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    served_at       TIMESTAMPTZ,
    edge_count      INTEGER     NOT NULL CHECK (edge_count >= 0)
);

CREATE TABLE IF NOT EXISTS release_equivalences (
    release_key TEXT NOT NULL REFERENCES resolution_releases (release_key) ON DELETE CASCADE,
    reactome_id TEXT NOT NULL,
    kegg_id     TEXT NOT NULL,
    relation    TEXT NOT NULL CHECK (relation IN ('equivalent', 'part_of')),
    PRIMARY KEY (release_key, reactome_id, kegg_id)
);

-- What changed from one release to the next: one row per change (a pathway added, removed or renamed, a pathway's
-- members changed, a gene renamed, added or removed, a resolution edge appearing, disappearing or changing class).
CREATE TABLE IF NOT EXISTS release_changes (
    source       TEXT        NOT NULL CHECK (source IN ('reactome', 'kegg', 'hgnc', 'resolution')),
    from_key     TEXT        NOT NULL,
    to_key       TEXT        NOT NULL,
    change_kind  TEXT        NOT NULL CHECK (change_kind IN (
        'pathway_added', 'pathway_removed', 'pathway_renamed', 'members_changed',
        'gene_added', 'gene_removed', 'gene_renamed',
        'edge_appeared', 'edge_disappeared', 'edge_reclassified')),
    subject_id   TEXT        NOT NULL,
    detail       JSONB       NOT NULL DEFAULT '{}',
    computed_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (source, from_key, to_key, change_kind, subject_id)
);
CREATE INDEX IF NOT EXISTS release_changes_pair_idx ON release_changes (source, to_key, from_key);

-- Serving reads the release history (the page's "what changed", answers that name their release), never writes it.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT SELECT ON source_releases, release_pathways, release_members, release_genes, resolution_releases,
            release_equivalences, release_changes TO {serving_role};
    END IF;
END $$;
