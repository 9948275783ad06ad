-- A frontmatter value as a content type: a text, trimmed, or null (a list, a number, a mapping or
-- blanks name no content type). `type: [project, active]` was stored as the JSON text of the
-- list, which no content-type filter matched. Rows already stored are set again at the next
-- latest_docs run (its plan version changed), with no note read, chunked or embedded again.
CREATE OR REPLACE FUNCTION rag.frontmatter_text(value jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT CASE WHEN jsonb_typeof(value) = 'string' THEN nullif(btrim(value #>> '{}'), '') END
$fn$;
