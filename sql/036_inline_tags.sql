-- Tags written in a note's text (#日記, #project/alpha) are the note's tags too, as in Obsidian
-- (knowledge_assets.core.chunks.inline_tags). The chunk refresh, which reads every note it
-- chunks, records them in inline_tags; tags is the frontmatter's tags followed by the inline
-- ones none of those has (tags fold case: rag.tag_key), so every filter, count and listing of
-- tags reads one column, and tag_paths follows it as before.
ALTER TABLE rag.latest_docs ADD COLUMN IF NOT EXISTS inline_tags text[] NOT NULL DEFAULT '{}';

CREATE OR REPLACE FUNCTION rag.merge_tags(frontmatter_tags text[], inline_tags text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT frontmatter_tags || coalesce(array_agg(u.t ORDER BY u.n), '{}')
    FROM unnest(inline_tags) WITH ORDINALITY AS u(t, n)
    WHERE NOT rag.tag_key(u.t) = ANY(rag.tag_keys(frontmatter_tags))
$$;

-- Notes stored before that may hold an inline tag ("#" at a line start or after a space, not
-- followed by a space or another "#": no heading marker) are chunked again at the next
-- refresh, which records their tags; texts that did not change keep their tokens and vectors.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND strpos(d.content, '#') > 0
  AND d.content ~ '(^|[[:space:]])#[^[:space:]#]';
