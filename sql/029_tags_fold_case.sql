-- Tags are case-insensitive, as in Obsidian: #Project, #project and #PROJECT are one tag, and
-- #Project/Alpha is under project. Notes keep their tags as written (latest_docs.tags); what a
-- filter compares is each tag's key, rag.tag_key, on both sides (the stored tag_paths and the
-- filter's tags), so no client folds case differently from the store.
CREATE FUNCTION rag.tag_key(tag text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT lower(tag) $$;

-- The keys of a list of tags, in order (blank and repeated keys are left to rag.tag_paths).
CREATE FUNCTION rag.tag_keys(tags text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(rag.tag_key(t) ORDER BY n), '{}')
    FROM unnest(tags) WITH ORDINALITY AS u(t, n)
$$;

-- tag_paths now holds the keys of each tag and its parents. Only this column is recomputed (the
-- index is rebuilt with it); tags, chunks and vectors are left as they are.
ALTER TABLE rag.latest_docs DROP COLUMN tag_paths;
ALTER TABLE rag.latest_docs
    ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (rag.tag_paths(rag.tag_keys(tags))) STORED;
CREATE INDEX latest_docs_tag_paths_idx ON rag.latest_docs USING GIN (tag_paths);
