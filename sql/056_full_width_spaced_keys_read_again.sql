-- A frontmatter key written with a full-width space beside it (`title　: 日記`, `　title: 日記`)
-- is read as YAML reads it, a key of its own, and the note now carries a warning naming the line
-- and the fix (knowledge_assets.core.ingest.fullwidth.spaced_key). A note stored before has no
-- such warning, so its file is read again at the next sync: its stored version is emptied, and a
-- sync reads a file whose stored version is empty. Its content hash is left as it is: the text
-- reads the same, so the sync stores the warning and nothing is chunked or embedded again.
-- Bookmark files are JSON, read as before.
DO $body$
DECLARE
    spaced CONSTANT text := format(
        'jsonb_path_exists(frontmatter, %L)',
        'strict $.** ? (@.type() == "object").keyvalue() ? (@.key like_regex "^\u3000|\u3000$")');
    t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'frontmatter' AND NOT a.attisdropped
        WHERE n.nspname = 'raw' AND c.relkind = 'r'
          AND NOT EXISTS (SELECT 1 FROM meta.sources s
                          WHERE s.source_table = c.relname AND s.doc_type = 'bookmark_json')
    LOOP
        EXECUTE format('UPDATE raw.%I SET version = '''' WHERE %s', t, spaced);
    END LOOP;
END
$body$;
