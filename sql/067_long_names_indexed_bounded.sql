-- A note's name keys are bounded: a title, alias or file name whose key runs over 1,000 bytes
-- (an H1 that is a whole paragraph of prose, a pasted article as an alias) is no name anyone
-- looks a note up by, and the GIN index of name_keys refuses an entry over about 2,700 bytes:
-- one such note failed the latest_docs step for every note of every source. Its key is '', as
-- for a title with no letters, so the places of the others stay as sql/058 set them. The
-- known-item lookup needs no change: a query whose key is that long finds no note either way.
CREATE OR REPLACE FUNCTION rag.note_name_keys(title text, aliases text[], file_path text)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT array_agg(CASE WHEN octet_length(k) > 1000 THEN '' ELSE k END ORDER BY n)
FROM unnest(rag.note_name_keys(title, aliases)
    || coalesce(rag.file_name_keys(file_path), ARRAY['', ''])) WITH ORDINALITY AS u(k, n)
$fn$;

-- As in sql/064: the stored column is made again with the bounded keys (the table is rewritten
-- once; no note is read, chunked or embedded again).
ALTER TABLE rag.latest_docs DROP COLUMN name_keys;
ALTER TABLE rag.latest_docs ADD COLUMN name_keys text[]
    GENERATED ALWAYS AS (rag.note_name_keys(title, aliases, file_path)) STORED;
CREATE INDEX latest_docs_name_keys_idx ON rag.latest_docs USING GIN (name_keys);
