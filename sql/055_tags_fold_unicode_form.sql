-- A tag is one tag in either Unicode form: ガイド typed (one character per kana, NFC) and ガイド
-- pasted from a file name on macOS (カ plus a combining mark, NFD) print alike, and were two tags
-- to every filter and tag list, so a search on the typed tag missed the other notes. The key of
-- a tag (sql/029) folds the form as well as case, on both sides of every comparison, as paths
-- are found in either form (sql/041). Notes keep their tags as written.
CREATE OR REPLACE FUNCTION rag.tag_key(tag text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT lower(normalize(tag, NFC)) $$;

-- tag_paths is stored: it is worked out again from the notes' tags with the new key (the index
-- is rebuilt with it). No note is read, chunked or embedded again.
ALTER TABLE rag.latest_docs DROP COLUMN tag_paths;
ALTER TABLE rag.latest_docs
    ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (rag.tag_paths(rag.tag_keys(tags))) STORED;
CREATE INDEX latest_docs_tag_paths_idx ON rag.latest_docs USING GIN (tag_paths);

-- An inline tag written decomposed was cut at its first combining mark (#ガイド read as #カ, the
-- chunker's \w takes no mark): notes whose text may hold one are chunked again at the next
-- refresh, which reads such tags whole. Texts that did not change keep their tokens and vectors.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND strpos(d.content, '#') > 0
  AND d.content ~ '(^|[[:space:]])#[^[:space:]#]*[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u3099\u309a\ufe20-\ufe2f]';
