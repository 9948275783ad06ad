-- An article saved twice in one bookmark file (the same url and text) is now one chunk; before,
-- each copy was a chunk and a search listed the article twice. Bookmark files are chunked again
-- at the next refresh (a note is re-chunked when its first chunk's document hash no longer
-- matches); unchanged texts keep their vectors and keyword tokens. Notes are not touched.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND d.doc_type = 'bookmark_json';
