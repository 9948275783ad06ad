-- The names each note's links lead to (its wikilinks', embeds' and Markdown links' file names,
-- without `.md`, composed and case-folded), written when the note is chunked and GIN-indexed:
-- the notes that link to a note are then found from the index, where each note view's list of
-- them read every note's body (about 0.3 s at 10,000 notes).
ALTER TABLE rag.latest_docs ADD COLUMN IF NOT EXISTS link_names text[] NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS latest_docs_link_names_idx ON rag.latest_docs USING GIN (link_names);

-- Notes holding a link are chunked again at the next refresh to record their names (a note is
-- re-chunked when its first chunk's document hash no longer matches; unchanged texts keep their
-- vectors and keyword tokens). Other notes have none to record.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND (strpos(d.content, '[[') > 0 OR strpos(d.content, '](') > 0);
