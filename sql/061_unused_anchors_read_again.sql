-- A plain frontmatter value's YAML anchor that no alias uses (`title: &anchor`) is now reported
-- with a warning naming the line and the fix (knowledge_assets.core.ingest.yaml_fixes
-- .unused_anchor): YAML drops the anchor, so such a value was stored as null with nothing said.
-- A note stored before with a null value anywhere in its frontmatter is read again at the next
-- sync (a sync reads a file whose stored version is empty); its content hash is left as it is,
-- so only the warning is stored and nothing is chunked or embedded again. Bookmark files are
-- JSON, read as before.
DO $body$
DECLARE
    has_null CONSTANT text := format('jsonb_path_exists(frontmatter, %L)', 'strict $.** ? (@ == null)');
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
        EXECUTE format('UPDATE raw.%I SET version = '''' WHERE %s', t, has_null);
    END LOOP;
END
$body$;
