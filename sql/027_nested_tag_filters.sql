-- Obsidian's nested tags: a note tagged `project/alpha` is under `project` too, so a search
-- filtered on `project` finds it, as Obsidian's tag search does. latest_docs.tag_paths holds
-- each tag of a note and every parent of it; computed once per write and GIN-indexed, so a
-- filter reads the notes of its tags from the index and derives nothing per row.
CREATE FUNCTION rag.tag_paths(tags text[]) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    paths text[] := '{}';
    tag text;
BEGIN
    FOREACH tag IN ARRAY coalesce(tags, '{}') LOOP
        LOOP  -- the tag, then each parent: cut at the last '/' until none is left
            IF tag <> '' AND NOT tag = ANY (paths) THEN
                paths := paths || tag;
            END IF;
            EXIT WHEN strpos(tag, '/') = 0;
            tag := left(tag, length(tag) - strpos(reverse(tag), '/'));
        END LOOP;
    END LOOP;
    RETURN paths;
END
$$;

ALTER TABLE rag.latest_docs
    ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (rag.tag_paths(tags)) STORED;
CREATE INDEX latest_docs_tag_paths_idx ON rag.latest_docs USING GIN (tag_paths);
