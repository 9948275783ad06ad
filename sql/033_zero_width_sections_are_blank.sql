-- A section whose body is only zero-width characters (U+200B..U+200D, U+2060, U+FEFF) is now as
-- empty as a heading with no body, by the blank rule whole notes follow (sql/028): it made a
-- chunk of invisible text, embedded and returned by search as a hit with nothing to read.
-- Only notes with such a chunk are chunked again at the next refresh (a note is re-chunked when
-- its first chunk's document hash no longer matches); every other note keeps its chunks.
UPDATE rag.chunks c
SET doc_hash = ''
WHERE c.chunk_index = 0
  AND c.document_id IN (
      SELECT b.document_id FROM rag.chunks b
      WHERE b.content <> ''
        AND b.content !~ '[^\t\n\v\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]'
  );
