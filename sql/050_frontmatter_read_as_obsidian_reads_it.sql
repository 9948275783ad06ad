-- Frontmatter is read by YAML 1.2's core schema, as Obsidian reads it
-- (knowledge_assets.core.ingest.yaml_core): `title: no`, `on`, `12:30` and `1_000` are text where
-- YAML 1.1 made them booleans and numbers, `0123` is 123 (not the octal 83), and `0o17` and
-- `1e3` are numbers where they were text. A title or heading that is not text is read by one
-- rule in the chunker and in latest_docs (sql/R__views_frontmatter_titles.sql), where the one
-- showed `['a', 'b']` and the other `["a", "b"]`.
--
-- A file is read again at its next sync only when its stored frontmatter may read differently:
-- it holds a boolean or a number anywhere (YAML 1.1 may have made it of `no` or `12:30`), a text
-- YAML 1.2 reads as a number (`1e3`, `0o17`), or a key that was a boolean or a number. A sync
-- reads a file whose stored version is empty. The file's text is unchanged, so its content hash
-- is emptied as well, in its raw row and its latest row alike: the latest_docs refresh then
-- writes the frontmatter read again, and the chunks refresh chunks it. Until the sync has read
-- the file both hashes agree, so nothing is redone with the frontmatter as it was read before.
-- That sync lists such files as changed, once. Bookmark files are JSON, read as before.
DO $body$
DECLARE
    -- a value or key YAML 1.1 may have read otherwise: what YAML 1.2 reads as a number, and the
    -- keys a boolean or a number became when stored
    number_like CONSTANT text := '^([-+]?([.][0-9]+|[0-9]+([.][0-9]*)?)([eE][-+]?[0-9]+)?'
        '|0o[0-7]+|0x[0-9a-fA-F]+|True|False)$';
    read_differently CONSTANT text := format(
        'jsonb_path_exists(frontmatter, %L) OR jsonb_path_exists(frontmatter, %L)',
        'strict $.** ? (@.type() == "number" || @.type() == "boolean"'
            || ' || (@.type() == "string" && @ like_regex "' || number_like || '"))',
        'strict $.** ? (@.type() == "object").keyvalue() ? (@.key like_regex "'
            || number_like || '")');
    t text;
BEGIN
    -- raw.docs_local, raw.docs_github and every declared Markdown source's table
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'frontmatter' AND NOT a.attisdropped
        WHERE n.nspname = 'raw' AND c.relkind = 'r'
          AND NOT EXISTS (SELECT 1 FROM meta.sources s
                          WHERE s.source_table = c.relname AND s.doc_type = 'bookmark_json')
    LOOP
        EXECUTE format(
            'UPDATE raw.%I SET version = '''', content_hash = '''' WHERE %s', t, read_differently);
        EXECUTE format(
            'UPDATE rag.latest_docs l SET content_hash = '''' FROM raw.%I d'
            ' WHERE l.id = d.id AND d.content_hash = ''''', t);
    END LOOP;
END
$body$;

-- A note whose title or heading reads differently by the one rule is written again by the next
-- latest_docs refresh (its latest row's content hash no longer matches its file's): a list, a
-- number, a mapping or a boolean (the chunker wrote `['a', 'b']` and `True`), or text that ends
-- in whitespace other than spaces (an ideographic space, which the chunker stripped and
-- latest_docs kept). A bookmark file's `description` titles its passages too.
UPDATE rag.latest_docs
SET content_hash = ''
WHERE content_hash <> ''
  AND EXISTS (
      SELECT 1
      FROM jsonb_each(frontmatter) f
      WHERE (f.key IN ('title', 'heading') OR (f.key = 'description' AND doc_type = 'bookmark_json'))
        AND (jsonb_typeof(f.value) NOT IN ('string', 'null')
             OR btrim(f.value #>> '{}') ~ ('^[\t\n\v\f\r\u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a'
                 '\u2028\u2029\u202f\u205f\u3000]|[\t\n\v\f\r\u001c-\u001f\u0085\u00a0\u1680'
                 '\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$'))
  );

-- Every note whose latest row was marked is chunked again once it is written (a note is
-- re-chunked when its first chunk's document hash no longer matches); texts that did not change
-- keep their vectors and keyword tokens.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND d.content_hash = '';

-- The next latest_docs refresh plans every file again: a plan reads the frontmatter (`previous`,
-- dates, draft markers), and files it left out (drafts, superseded versions) are read again too.
DELETE FROM meta.latest_state;

-- A note rejected because YAML 1.1 could not build a lone `=` (`title: =`) is read again: it is
-- the text "=" now, and an unchanged rejected file is otherwise never read again.
UPDATE raw.rejected_files
SET version = ''
WHERE reason LIKE '%tag:yaml.org,2002:value%';
