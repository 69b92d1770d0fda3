-- Every answer served is stored under an id (GET /answers/{id}, Markdown export), inside a conversation whose
-- turns carry the entities a follow-up may refer to. Conversations older than the retention are deleted with
-- their answers (FLUX_CONVERSATION_RETENTION_DAYS).
CREATE TABLE IF NOT EXISTS conversations (
    id          TEXT        PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS conversations_updated_at ON conversations (updated_at);

CREATE TABLE IF NOT EXISTS answers (
    id              TEXT        PRIMARY KEY,
    conversation_id TEXT        NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn            INTEGER     NOT NULL CHECK (turn >= 1),
    question        TEXT        NOT NULL,
    asked_as        TEXT        NOT NULL,  -- the question after follow-up resolution
    entities        JSONB       NOT NULL DEFAULT '{}'::jsonb,
    answer          JSONB       NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (conversation_id, turn)
);
