-- Zero-width characters are blank too: a note whose text is only U+200B (zero-width space),
-- U+200C/U+200D (zero-width non-joiner/joiner), U+2060 (word joiner) or U+FEFF (a byte-order
-- mark left mid-file) shows nothing, yet it counted as having a body, was searched, and came
-- back as a hit with no visible text. It is now empty like a note of spaces (025's rule plus
-- these characters): stored, readable by path, not searched.
DO $body$
DECLARE
    expr CONSTANT text := $e$regexp_replace(content, '^[ \t]*#{1,6}([ \t][^\n]*)?$', '', 'gn')
        ~ '[^\t\n\v\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]'$e$;
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
