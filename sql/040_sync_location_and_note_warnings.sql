-- Where each source was last synced from, as a user names it: the vault folder, or
-- owner/repo@branch/prefix on GitHub. A sync that would delete most of a source's notes is
-- refused, and its message says that the folder changed from this location to the new one (a
-- wrong KA_VAULT_PATH or prefix). States written before this column get it from their key.
ALTER TABLE meta.sync_state ADD COLUMN IF NOT EXISTS location text;
UPDATE meta.sync_state
SET location = regexp_replace(source_key, '^(docs_[a-z0-9_]+:)?(local:|github:)?', '')
WHERE location IS NULL;

-- What was odd in a note but cost it nothing (a frontmatter key written twice, with its lines):
-- kept with the note, shown by `get` and logged by the sync that read it. raw.docs_local and
-- raw.docs_github, and the declared sources' tables made so far; tables made from now on copy
-- raw.docs_local's columns (raw.ensure_docs_table: LIKE … INCLUDING ALL).
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'raw' AND c.relkind = 'r' AND c.relname ~ '^docs_[a-z][a-z0-9_]*$'
    LOOP
        EXECUTE format(
            'ALTER TABLE raw.%I ADD COLUMN IF NOT EXISTS warnings text[] NOT NULL DEFAULT ''{}''',
            t.relname
        );
    END LOOP;
END
$$;
