-- A title or heading of zero-width characters alone (U+200B-U+200D, U+2060, U+FEFF) is blank, as
-- whitespace is: the note is titled as when it has none (its first heading, or its file name),
-- where it showed an empty-looking title in results, the note view and its passages
-- (sql/R__views_frontmatter_titles.sql and the chunker read titles by one rule).
--
-- A note whose title or heading holds such a character is written again by the next latest_docs
-- refresh (its latest row's content hash no longer matches its file's) and chunked again; texts
-- that did not change keep their vectors and keyword tokens.
UPDATE rag.latest_docs
SET content_hash = ''
WHERE content_hash <> ''
  AND EXISTS (
      SELECT 1
      FROM jsonb_each(frontmatter) f
      WHERE (f.key IN ('title', 'heading') OR (f.key = 'description' AND doc_type = 'bookmark_json'))
        AND f.value::text ~ '[\u200b-\u200d\u2060\ufeff]'
  );

UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND d.content_hash = '';

-- The next latest_docs refresh plans every file again, reading the titles by the new rule.
DELETE FROM meta.latest_state;
