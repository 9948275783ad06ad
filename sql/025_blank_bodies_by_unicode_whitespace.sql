-- A note whose body holds nothing but headings and blank lines is empty: it stays stored but is
-- not searched. What counted as blank was left to the server's locale: under C.UTF-8 a no-break
-- space (U+00A0, common in text pasted from the web) is not whitespace, under the C locale not
-- even the ideographic space U+3000, so a note of headings and such lines was searched and made
-- passages with no text in them. The characters are now listed: Unicode's whitespace, the same
-- the chunker strips.
DO $body$
DECLARE
    expr CONSTANT text := $e$regexp_replace(content, '^[ \t]*#{1,6}([ \t][^\n]*)?$', '', 'gn')
        ~ '[^\t\n\v\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]'$e$;
    t text;
BEGIN
    -- raw.docs_local, raw.docs_github and every declared source's table (made LIKE docs_local)
    FOR t IN
        SELECT c.relname FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'raw' AND c.relkind = 'r' AND a.attname = 'has_body'
          AND NOT a.attisdropped
    LOOP
        EXECUTE format('ALTER TABLE raw.%I DROP COLUMN has_body', t);
        EXECUTE format(
            'ALTER TABLE raw.%I ADD COLUMN has_body boolean GENERATED ALWAYS AS (%s) STORED', t, expr
        );
    END LOOP;
END
$body$;

-- The next latest_docs refresh classifies every file again, so notes now found empty leave it.
DELETE FROM meta.latest_state;
