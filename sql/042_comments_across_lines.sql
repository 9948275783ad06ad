-- A comment opened inside a paragraph and closed on a later line of it (`text %% note` then
-- `more note %% text`) is now cut from passages with the lines between, as the note page and
-- Obsidian's reading view leave it out; before, each line was read on its own and the comment
-- stayed in the passage and its keyword tokens.
-- Only notes holding a comment opener can read differently, so only they are touched. Their
-- chunks are made again at the next refresh (a note is re-chunked when its first chunk's
-- document hash no longer matches; unchanged texts keep their vectors and keyword tokens).
-- Titles are unchanged: a heading ends a paragraph, so no such comment reaches one.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND (strpos(d.content, '%%') > 0 OR strpos(d.content, '<!--') > 0);
