-- What a reaction consumes, produces, and is catalysed or regulated by, and which reaction follows which (Reactome's
-- precedingEvent; BioPAX nextStep). A gene is its UniProt accession, a compound its ChEBI id; a complex or set keeps
-- its Reactome id with the UniProt / ChEBI ids of its parts. Rows go with their reaction.
CREATE TABLE IF NOT EXISTS reaction_participants (
    reaction_id TEXT   NOT NULL REFERENCES reactions (reaction_id) ON DELETE CASCADE,
    role        TEXT   NOT NULL CHECK (role IN ('input', 'output', 'catalyst', 'positive_regulator',
                                                'negative_regulator')),
    entity_kind TEXT   NOT NULL CHECK (entity_kind IN ('gene', 'compound', 'complex', 'set')),
    entity_id   TEXT   NOT NULL,
    name        TEXT   NOT NULL DEFAULT '',
    components  TEXT[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (reaction_id, role, entity_id)
);
CREATE INDEX IF NOT EXISTS reaction_participants_entity_idx ON reaction_participants (entity_id);
CREATE INDEX IF NOT EXISTS reaction_participants_components_idx ON reaction_participants USING gin (components);

CREATE TABLE IF NOT EXISTS reaction_steps (
    preceding_id TEXT NOT NULL REFERENCES reactions (reaction_id) ON DELETE CASCADE,
    following_id TEXT NOT NULL REFERENCES reactions (reaction_id) ON DELETE CASCADE,
    PRIMARY KEY (preceding_id, following_id),
    CHECK (preceding_id <> following_id)
);
CREATE INDEX IF NOT EXISTS reaction_steps_following_idx ON reaction_steps (following_id);

-- Serving reads reactions and what takes part in them, never writes them.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        GRANT SELECT ON reactions, reaction_participants, reaction_steps TO {serving_role};
    END IF;
END $$;
