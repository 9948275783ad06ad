-- Chunk texts that left rag.chunks (a chunk removed, or rewritten with another text), so removing
-- the vectors no chunk uses any more looks only at them, not at every input row (0.3-0.4 s at
-- 194,000 chunks, on every run that changed or deleted a note). No unique key: writers append
-- without waiting on each other, and the reader takes distinct hashes. Re-applied when changed.
CREATE TABLE IF NOT EXISTS rag.departed_texts (text_hash text NOT NULL);

CREATE OR REPLACE FUNCTION rag.note_departed_texts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rag.departed_texts (text_hash) SELECT DISTINCT text_hash FROM departed;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS chunks_departed_on_delete ON rag.chunks;
CREATE TRIGGER chunks_departed_on_delete AFTER DELETE ON rag.chunks
    REFERENCING OLD TABLE AS departed
    FOR EACH STATEMENT EXECUTE FUNCTION rag.note_departed_texts();
DROP TRIGGER IF EXISTS chunks_departed_on_update ON rag.chunks;
CREATE TRIGGER chunks_departed_on_update AFTER UPDATE ON rag.chunks
    REFERENCING OLD TABLE AS departed
    FOR EACH STATEMENT EXECUTE FUNCTION rag.note_departed_texts();
