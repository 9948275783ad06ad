-- Re-creatable views; re-applied whenever this file changes.
CREATE OR REPLACE VIEW raw.docs AS
SELECT 'docs_github'::text AS source_table, id, file_path, frontmatter, content, content_hash, fetched_at
FROM raw.docs_github
UNION ALL
SELECT 'docs_local'::text, id, file_path, frontmatter, content, content_hash, fetched_at
FROM raw.docs_local;

-- The items of a frontmatter list (tags, aliases) with nested lists flattened into it, each with
-- its position for ordering: Obsidian reads `tags: [[a, b], c]` as a, b, c. At most 8 levels of
-- lists are read (knowledge_assets.core.chunks.chunk_text.MAX_LIST_DEPTH); a value that is not
-- a list has no items.
CREATE OR REPLACE FUNCTION rag.flat_items(value jsonb) RETURNS TABLE (item jsonb, pos int[])
LANGUAGE sql IMMUTABLE AS $$
    WITH RECURSIVE nested(item, pos) AS (
        SELECT value, '{}'::int[] WHERE jsonb_typeof(value) = 'array'
        UNION ALL
        SELECT e.item, n.pos || e.n::int
        FROM nested n CROSS JOIN LATERAL jsonb_array_elements(n.item) WITH ORDINALITY AS e(item, n)
        WHERE jsonb_typeof(n.item) = 'array' AND cardinality(n.pos) < 8
    )
    SELECT item, pos FROM nested WHERE jsonb_typeof(item) <> 'array'
$$;

-- Blanks around a tag or an alias (knowledge_assets.core.chunks.chunk_text.BLANKS): every
-- character Python's str.isspace() accepts (the ideographic space U+3000 a Japanese input method
-- leaves after a word, tabs, no-break spaces) and the invisible zero-width ones. btrim() removes
-- only ' ', so `tags: [日記　]` was 日記 to the chunker but `日記　` here, and a filter on 日記
-- missed the note.
CREATE OR REPLACE FUNCTION rag.trim_blanks(value text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT regexp_replace(value, format('^%1$s+|%1$s+$',
        '[\s\u001c-\u001f\u0085\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]'),
        '', 'g')
$$;

-- Frontmatter aliases: one string, or a list of them (nested lists flattened; texts and
-- numbers), each trimmed and once, in order; blanks dropped.
CREATE OR REPLACE FUNCTION rag.jsonb_text_array(value jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(t ORDER BY first), '{}'::text[])
    FROM (
        SELECT rag.trim_blanks(item #>> '{}') AS t, min(pos) AS first
        FROM (
            SELECT f.item, f.pos FROM rag.flat_items(value) f
            WHERE jsonb_typeof(f.item) IN ('string', 'number')
            UNION ALL
            SELECT value, '{}'::int[] WHERE jsonb_typeof(value) = 'string'
        ) items
        GROUP BY 1
    ) s
    WHERE t <> ''
$$;

-- Frontmatter tags as the chunker reads them (knowledge_assets.core.chunks.chunk_text.normalise_tags):
-- a list (nested lists flattened; only texts and numbers are tags), or one string split on
-- commas (else on whitespace); a leading '#' and blanks dropped; each tag once, where it first is.
CREATE OR REPLACE FUNCTION rag.note_tags(value jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(t ORDER BY first), '{}'::text[])
    FROM (
        SELECT rag.trim_blanks(ltrim(rag.trim_blanks(item), '#')) AS t, min(pos) AS first
        FROM (
            SELECT f.item #>> '{}' AS item, f.pos
            FROM rag.flat_items(value) f
            WHERE jsonb_typeof(f.item) IN ('string', 'number')
            UNION ALL
            SELECT u.item, ARRAY[u.n::int]
            FROM unnest(CASE jsonb_typeof(value)
                WHEN 'string' THEN CASE WHEN strpos(value #>> '{}', ',') > 0
                    THEN string_to_array(value #>> '{}', ',')
                    -- split where Python's str.split() splits: on its whitespace (no zero-width)
                    ELSE regexp_split_to_array(rag.trim_blanks(value #>> '{}'),
                        '[\s\u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+') END
                WHEN 'number' THEN ARRAY[value #>> '{}']
                ELSE '{}'::text[]
            END) WITH ORDINALITY AS u(item, n)
        ) items
        GROUP BY 1
    ) s
    -- A "tag" of over 1,000 bytes (a paragraph) is none, and the tags' index refuses it
    -- (core.chunks.chunk_text.MAX_NAME_BYTES).
    WHERE t <> '' AND octet_length(t) <= 1000
$$;

CREATE OR REPLACE VIEW rag.documents_with_metadata AS
SELECT
    d.id,
    d.source_table,
    d.file_path,
    d.frontmatter ->> 'title' AS title,
    rag.note_tags(d.frontmatter -> 'tags') AS tags,
    rag.jsonb_text_array(d.frontmatter -> 'aliases') AS aliases,
    d.content_hash,
    (l.id IS NOT NULL) AS is_latest
FROM raw.docs d
LEFT JOIN rag.latest_docs l ON l.id = d.id;

-- A frontmatter date (YYYY-MM-DD, optionally followed by a time) or NULL for anything else.
CREATE OR REPLACE FUNCTION rag.try_date(value text) RETURNS date
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN substring(value from '^\d{4}-\d{2}-\d{2}')::date;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$;

-- latest_docs stores the tags and aliases these functions derive (tags: the frontmatter's, then
-- the inline ones the chunk refresh recorded): a note written under an earlier rule gets the
-- current one without waiting for an edit.
UPDATE rag.latest_docs
SET tags = rag.merge_tags(rag.note_tags(frontmatter -> 'tags'), inline_tags),
    aliases = rag.jsonb_text_array(frontmatter -> 'aliases')
WHERE tags IS DISTINCT FROM rag.merge_tags(rag.note_tags(frontmatter -> 'tags'), inline_tags)
   OR aliases IS DISTINCT FROM rag.jsonb_text_array(frontmatter -> 'aliases');
