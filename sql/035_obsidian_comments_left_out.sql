-- Obsidian's comments (%% … %%, inline or on lines of their own) are left out of a note's title
-- and passages, as HTML comments are (032) and as Obsidian's reading view and the note page leave
-- them out: a template's instructions were embedded and shown in hits.
-- Only notes holding "%%" can read differently, so only they are touched; every other note
-- keeps its row, chunks and keyword tokens.
-- Their chunks are made again at the next refresh (a note is re-chunked when its first chunk's
-- document hash no longer matches; unchanged texts keep their vectors).
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND strpos(d.content, '%%') > 0;

-- A title taken from the body is worked out again by the next latest_docs refresh, which
-- rewrites a row whose content hash differs (its frontmatter title, if any, is kept as it was).
UPDATE rag.latest_docs
SET content_hash = ''
WHERE strpos(content, '%%') > 0
  AND coalesce(btrim(frontmatter ->> 'title'), '') = '';
