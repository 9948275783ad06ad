-- What the last latest_docs refresh of each source was computed from (a fingerprint of the raw
-- files, the stored latest rows, the source's settings and the conventions) and what it decided,
-- so a refresh whose inputs are all unchanged can be skipped without re-reading every frontmatter.
CREATE TABLE IF NOT EXISTS meta.latest_state (
    source_table text PRIMARY KEY,
    fingerprint text NOT NULL,
    plan jsonb NOT NULL,
    refreshed_at timestamptz NOT NULL DEFAULT now()
);

-- Every transaction that changed rag.chunks, or removed inputs or vectors. A model's embedding
-- pass that found every chunk text embedded records the snapshot it looked in; while no
-- transaction invisible to that snapshot appears here, nothing can be missing, and the next pass
-- need not count 200,000 chunk texts to find that out. Commit-safe: a writer still running when
-- the snapshot was taken is invisible to it, so it counts as a change once it commits.
CREATE TABLE IF NOT EXISTS rag.index_writes (xid xid8 PRIMARY KEY);

CREATE OR REPLACE FUNCTION rag.note_index_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rag.index_writes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_note_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rag.chunks
    FOR EACH STATEMENT EXECUTE FUNCTION rag.note_index_write();
-- Inserted inputs and vectors only ever complete a model: only removals are changes here.
CREATE TRIGGER embedding_inputs_note_removal AFTER DELETE OR TRUNCATE ON rag.embedding_inputs
    FOR EACH STATEMENT EXECUTE FUNCTION rag.note_index_write();
CREATE TRIGGER embeddings_note_removal AFTER DELETE OR TRUNCATE ON rag.embeddings
    FOR EACH STATEMENT EXECUTE FUNCTION rag.note_index_write();

-- The last pass per model and template that found every chunk text embedded: the snapshot it
-- counted in and how many distinct texts there were.
CREATE TABLE IF NOT EXISTS rag.embedding_checks (
    model text NOT NULL REFERENCES rag.models (model) ON DELETE CASCADE,
    template text NOT NULL,
    checked pg_snapshot NOT NULL,
    texts integer NOT NULL,
    PRIMARY KEY (model, template)
);
