-- Resolution by a fitted model: each pair carries the model's probabilities, the confidence of its relation
-- (the probability of the chosen class), the name-embedding cosine it used, and the model version.
ALTER TABLE pathway_mappings
    ADD COLUMN IF NOT EXISTS name_cosine    DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (name_cosine BETWEEN -1 AND 1),
    ADD COLUMN IF NOT EXISTS p_equivalent   DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (p_equivalent BETWEEN 0 AND 1),
    ADD COLUMN IF NOT EXISTS p_part_of      DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (p_part_of BETWEEN 0 AND 1),
    ADD COLUMN IF NOT EXISTS confidence     DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (confidence BETWEEN 0 AND 1),
    ADD COLUMN IF NOT EXISTS method_version TEXT             NOT NULL DEFAULT '';
