-- A frontmatter value used as a note's title or heading (`title`, a note's or bookmark file's
-- `heading`), read by one rule here (latest_docs.title and top_heading) and in the chunker
-- (knowledge_assets.core.chunks.chunk_text.title_text), so a note is shown with the title its
-- passages were embedded with: text stripped of Unicode whitespace, a number as written, a
-- list's texts and numbers joined by ', ', and NULL for a boolean, null or mapping (the title
-- then falls back as when it is missing). After R__views.sql, whose rag.flat_items it reads.

-- Text without the whitespace around it, as Python's str.strip() leaves it (no-break and
-- ideographic spaces too: btrim alone takes only spaces); blank text is none, and so is text of
-- zero-width characters alone (U+200B-U+200D, U+2060, U+FEFF: chunk_text.is_blank, and the
-- blank rule of note bodies, sql/028).
CREATE OR REPLACE FUNCTION rag.title_trim(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN value ~ E'[^\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200d\u2028'
        '\u2029\u202f\u205f\u2060\u3000\ufeff]'
    THEN btrim(value, E'\t\n\u000b\f\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680'
        '\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f'
        '\u205f\u3000') END
$$;

-- A title written as a list: its texts and numbers, nested lists flattened as for tags
-- (`title: [[Note]]`, an Obsidian link YAML reads as a list in a list, is "Note"), joined by
-- ', ' in order.
CREATE OR REPLACE FUNCTION rag.title_items(value jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT string_agg(t, ', ' ORDER BY pos)
    FROM (
        SELECT CASE jsonb_typeof(f.item) WHEN 'number' THEN f.item #>> '{}'
               ELSE rag.title_trim(f.item #>> '{}') END AS t, f.pos
        FROM rag.flat_items(value) f
        WHERE jsonb_typeof(f.item) IN ('string', 'number')
    ) items
    WHERE t IS NOT NULL
$$;

-- One CASE, so the planner inlines it into the statements that call it: a refresh of 10,000
-- notes reads its title and heading in about 7 ms, where a body over rag.flat_items took 170 ms.
CREATE OR REPLACE FUNCTION rag.frontmatter_title(value jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(value)
        WHEN 'string' THEN rag.title_trim(value #>> '{}')
        WHEN 'number' THEN value #>> '{}'
        WHEN 'array' THEN rag.title_items(value)
    END
$$;
