-- Re-creatable views; re-applied whenever this file changes.
CREATE OR REPLACE VIEW raw.docs AS
SELECT 'docs_github'::text AS source_table, id, file_path, frontmatter, content, content_hash, fetched_at
FROM raw.docs_github
UNION ALL
SELECT 'docs_local'::text, id, file_path, frontmatter, content, content_hash, fetched_at
FROM raw.docs_local;

CREATE OR REPLACE FUNCTION rag.jsonb_text_array(value jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE jsonb_typeof(value)
        WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(value))
        WHEN 'string' THEN ARRAY[value #>> '{}']
        ELSE '{}'::text[]
    END
$$;

-- Frontmatter tags as the chunker reads them (knowledge_assets.core.chunks.chunking.normalise_tags):
-- a list, or one string split on commas (else on whitespace); a leading '#' and blanks dropped.
CREATE OR REPLACE FUNCTION rag.note_tags(value jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(t ORDER BY n) FILTER (WHERE t <> ''), '{}'::text[])
    FROM (
        SELECT btrim(ltrim(btrim(item), '#')) AS t, n
        FROM unnest(CASE jsonb_typeof(value)
            WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(value))
            WHEN 'string' THEN CASE WHEN strpos(value #>> '{}', ',') > 0
                THEN string_to_array(value #>> '{}', ',')
                ELSE regexp_split_to_array(btrim(value #>> '{}'), '\s+') END
            WHEN 'number' THEN ARRAY[value #>> '{}']
            ELSE '{}'::text[]
        END) WITH ORDINALITY AS u(item, n)
        WHERE item IS NOT NULL
    ) s
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
