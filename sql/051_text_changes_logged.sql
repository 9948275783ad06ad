-- Which chunk texts each recorded change (rag.index_writes) touched, so a model's embedding pass
-- after an edit counts only those texts rather than every chunk text of the store: counting
-- 194,000 texts took 0.1-0.25 s on every run that changed a note, and grows with the vault.
--
-- Per transaction and text: how many chunk rows with that text it added (``arrived``) and
-- removed (``departed``); a text whose part-0 embedding input was removed is logged with both
-- at 0. From the texts of a pass that was complete at snapshot S, a later pass finds what is
-- missing (the logged texts some chunk has and no input covers) and how many distinct texts
-- there are now (a logged text had n - arrived + departed rows at S, n now).
--
-- A change is logged only while some model has a complete pass to count from, and only for
-- statements of at most 2,000 rows: a first build, or a re-chunk of the whole vault (batches of
-- about 5,000 chunks), is counted in full as before, and logs nothing. Any other change marks
-- its transaction ``texts_logged = false``, which sends the next pass to a full count.
ALTER TABLE rag.index_writes ADD COLUMN texts_logged boolean NOT NULL DEFAULT true;

CREATE TABLE rag.text_changes (
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    text_hash text NOT NULL,
    arrived integer NOT NULL DEFAULT 0,
    departed integer NOT NULL DEFAULT 0
);
CREATE INDEX text_changes_xid_idx ON rag.text_changes (xid);

CREATE FUNCTION rag.note_unlogged_write() RETURNS void LANGUAGE sql AS $$
    INSERT INTO rag.index_writes (xid, texts_logged) VALUES (pg_current_xact_id(), false)
    ON CONFLICT (xid) DO UPDATE SET texts_logged = false;
$$;

-- Whether a statement that changed ``n`` rows has its texts logged; if not, its transaction is
-- marked unlogged (nothing to do for a statement that changed nothing).
CREATE FUNCTION rag.texts_logged(n bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF n = 0 THEN
        RETURN false;
    END IF;
    IF n <= 2000 AND EXISTS (SELECT 1 FROM rag.embedding_checks) THEN
        RETURN true;
    END IF;
    PERFORM rag.note_unlogged_write();
    RETURN false;
END
$$;

CREATE FUNCTION rag.log_arrived_texts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF rag.texts_logged((SELECT count(*) FROM arrived)) THEN
        INSERT INTO rag.text_changes (text_hash, arrived)
        SELECT text_hash, count(*) FROM arrived GROUP BY text_hash;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION rag.log_departed_texts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF rag.texts_logged((SELECT count(*) FROM departed)) THEN
        INSERT INTO rag.text_changes (text_hash, departed)
        SELECT text_hash, count(*) FROM departed GROUP BY text_hash;
    END IF;
    RETURN NULL;
END
$$;

-- A row rewritten with the same text adds and removes one: no change to log.
CREATE FUNCTION rag.log_rewritten_texts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF rag.texts_logged((SELECT count(*) FROM arrived)) THEN
        INSERT INTO rag.text_changes (text_hash, arrived, departed)
        SELECT text_hash, sum(a), sum(d) FROM (
            SELECT text_hash, 1 AS a, 0 AS d FROM arrived
            UNION ALL SELECT text_hash, 0, 1 FROM departed) x
        GROUP BY text_hash HAVING sum(a) <> sum(d);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION rag.log_removed_inputs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF rag.texts_logged((SELECT count(*) FROM removed WHERE part = 0)) THEN
        INSERT INTO rag.text_changes (text_hash)
        SELECT DISTINCT chunk_hash FROM removed WHERE part = 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION rag.log_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM rag.note_unlogged_write();
    RETURN NULL;
END
$$;

-- Transition tables take one event per trigger, and hold every row the statement wrote: on a
-- first build of 1,000 notes the chunks step took about 0.1 s longer (7.88-7.95 s against
-- 7.81-7.82 s, bench/scale_steps.py full 1000). Deleting a vector deletes its inputs (a foreign
-- key cascade), whose trigger logs them.
CREATE TRIGGER chunks_log_inserted AFTER INSERT ON rag.chunks
    REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION rag.log_arrived_texts();
CREATE TRIGGER chunks_log_updated AFTER UPDATE ON rag.chunks
    REFERENCING OLD TABLE AS departed NEW TABLE AS arrived
    FOR EACH STATEMENT EXECUTE FUNCTION rag.log_rewritten_texts();
CREATE TRIGGER chunks_log_deleted AFTER DELETE ON rag.chunks
    REFERENCING OLD TABLE AS departed FOR EACH STATEMENT EXECUTE FUNCTION rag.log_departed_texts();
CREATE TRIGGER embedding_inputs_log_deleted AFTER DELETE ON rag.embedding_inputs
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION rag.log_removed_inputs();
CREATE TRIGGER chunks_log_truncated AFTER TRUNCATE ON rag.chunks
    FOR EACH STATEMENT EXECUTE FUNCTION rag.log_truncate();
CREATE TRIGGER embedding_inputs_log_truncated AFTER TRUNCATE ON rag.embedding_inputs
    FOR EACH STATEMENT EXECUTE FUNCTION rag.log_truncate();
CREATE TRIGGER embeddings_log_truncated AFTER TRUNCATE ON rag.embeddings
    FOR EACH STATEMENT EXECUTE FUNCTION rag.log_truncate();
