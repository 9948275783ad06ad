-- Where each source was last synced from, as a user names it: the vault folder, or
-- owner/repo@branch/prefix on GitHub. A sync that would delete most of a source's notes is
-- refused, and its message says that the folder changed from this location to the new one (a
-- wrong KA_VAULT_PATH or prefix). States written before this column get it from their key.
ALTER TABLE meta.sync_state ADD COLUMN IF NOT EXISTS location text;
UPDATE meta.sync_state
SET location = regexp_replace(source_key, '^(docs_[a-z0-9_]+:)?(local:|github:)?', '')
WHERE location IS NULL;
