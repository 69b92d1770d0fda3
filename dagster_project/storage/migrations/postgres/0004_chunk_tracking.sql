-- What each document's current chunks were made from: its content_hash and the chunker's signature.
-- A document whose key differs (new content, new chunker settings) is re-chunked; nothing else is.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS chunked_key TEXT;

-- Vectors still to compute are found by this partial index, not by scanning every chunk.
CREATE INDEX IF NOT EXISTS chunks_unembedded_idx ON chunks (id)
    WHERE embedding IS NULL OR embedded_content_hash IS DISTINCT FROM content_hash;
