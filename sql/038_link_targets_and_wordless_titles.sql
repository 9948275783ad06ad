-- Keyword tokens no longer include where a Markdown link or image points: a link's text is what
-- the passage says, its target (./interface-vs-type-alias.md, a URL) only where it leads, and
-- keyword search ranked lists of related links above the pages they named. Chunks holding a
-- link are tokenized again at the next refresh: their notes are chunked again (a note is
-- re-chunked when its first chunk's document hash no longer matches) and, with no chunk of the
-- current signature holding their text, their tokens are made anew; other chunks keep theirs.
-- Texts are unchanged, so every vector is kept.
UPDATE rag.chunks
SET chunker_sig = ''
WHERE strpos(content, '](') > 0 OR strpos(content, ']:') > 0;

UPDATE rag.chunks
SET doc_hash = ''
WHERE chunk_index = 0
  AND document_id IN (SELECT document_id FROM rag.chunks WHERE chunker_sig = '');

-- An H1 of punctuation alone (a template's "# <!-- number -->-<!-- title -->" leaves "-") no
-- longer titles its note: the file name does. Such notes are chunked again at the next refresh,
-- which records the title the chunker reads.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND btrim(d.title) <> ''
  AND d.title !~ '[^[:punct:][:space:]]';
