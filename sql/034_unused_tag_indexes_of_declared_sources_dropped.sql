-- The declared sources' raw tables copied raw.docs_local's indexes when they were made (sql/009,
-- LIKE … INCLUDING ALL), the tag index sql/031 dropped among them: their copies go too. Tables
-- made from now on no longer get one.
DO $$
DECLARE
    idx record;
BEGIN
    FOR idx IN
        SELECT i.schemaname, i.indexname FROM pg_indexes i
        WHERE i.schemaname = 'raw' AND i.indexdef LIKE '%USING gin (%frontmatter -> ''tags''%'
    LOOP
        EXECUTE format('DROP INDEX %I.%I', idx.schemaname, idx.indexname);
    END LOOP;
END
$$;
