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

CREATE OR REPLACE VIEW rag.documents_with_metadata AS
SELECT
    d.id,
    d.source_table,
    d.file_path,
    d.frontmatter ->> 'title' AS title,
    rag.jsonb_text_array(d.frontmatter -> 'tags') AS tags,
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
