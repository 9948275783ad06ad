-- A note is found by its path in any Unicode normalization form: macOS stores file names
-- decomposed (NFD: か plus a combining mark), while a name is typed composed (NFC: が). Lookups by
-- path (`get`, `similar`, the note view, MCP's get_doc) compare normalize(file_path, NFC), and
-- these indexes keep that an index lookup. The stored path stays the user's own file name. A
-- server whose encoding is not UTF-8 cannot normalize: there paths are compared as they are.
DO $$
DECLARE
    t record;
BEGIN
    IF current_setting('server_encoding') <> 'UTF8' THEN
        RETURN;
    END IF;
    CREATE INDEX IF NOT EXISTS latest_docs_file_path_nfc_idx
        ON rag.latest_docs (normalize(file_path, NFC));
    -- raw.docs_local, raw.docs_github and the declared sources' tables made so far; tables made
    -- from now on copy raw.docs_local's indexes (raw.ensure_docs_table: LIKE … INCLUDING ALL).
    FOR t IN
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'raw' AND c.relkind = 'r' AND c.relname ~ '^docs_[a-z][a-z0-9_]*$'
    LOOP
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS %I ON raw.%I (normalize(file_path, NFC))',
            left(t.relname, 45) || '_path_nfc_idx', t.relname
        );
    END LOOP;
END
$$;
