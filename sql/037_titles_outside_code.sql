-- A note without a frontmatter title is titled by its first H1 outside code and comments, as the
-- chunker reads it: the latest_docs rule, a regular expression over the whole text, took a
-- "# comment" line of a shell script in a code block for the title of a note without an H1.
-- The chunk refresh now records the chunker's title. Notes stored before that hold a fenced code
-- block and no frontmatter title are chunked again at the next refresh, which records theirs;
-- texts that did not change keep their tokens and vectors.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND coalesce(btrim(d.frontmatter ->> 'title'), '') = ''
  AND (strpos(d.content, '```') > 0 OR strpos(d.content, '~~~') > 0);
