-- A note is also looked up by the short names its title gives (known-item lookup): a title
-- X (Y) is named by X and, when Y is Latin script, by Y, so ジェネリクス and generics find the note
-- titled ジェネリクス (generics) even when no passage of it says either. These are the names
-- core/search/title_match.short_names gives the ranking; tests check that both agree.
--
-- The pair of keys (X's, then Y's; '' for none) of a title. The title is NFKC-folded and its
-- white space at either end removed as Python's str.strip() removes it (the list is what
-- scripts/title_key_sql.py --spaces prints); [(] and [)] rather than escapes, so the pattern
-- reads the same whatever standard_conforming_strings is, and no \s, which follows the locale.
-- Y holds no parentheses, so X is all before the last '(' whether the match is greedy or not.
CREATE OR REPLACE FUNCTION rag.short_name_keys(title text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $fn$
SELECT ARRAY[
    coalesce(rag.title_key(m[1]), ''),
    CASE WHEN btrim(m[2], s) ~ '^[A-Za-z0-9 .,''&+/-]*[A-Za-z][A-Za-z0-9 .,''&+/-]*$'
        THEN rag.title_key(m[2]) ELSE '' END]
FROM (SELECT E'\u0009\u000A\u000B\u000C\u000D\u001C\u001D\u001E\u001F\u0020\u0085\u1680\u2028\u2029') w(s),
    LATERAL regexp_match(btrim(normalize(title, NFKC), s), '^(.*)[(]([^()]*)[)]$') m
$fn$;

-- The keys a note is named by, in fixed places: 1 its title's, 2 and 3 its short names' (X, Y;
-- '' for none), then each alias's that has any (rag.name_keys, sql/057, gives the title's and
-- the aliases'). The places tell the lookup what named the note.
CREATE OR REPLACE FUNCTION rag.note_name_keys(title text, aliases text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT k[1:1] || coalesce(rag.short_name_keys(title), ARRAY['', '']) || k[2:]
FROM rag.name_keys(title, aliases) k
$fn$;

-- The stored column is made again with the new keys (PostgreSQL before 17 cannot change a
-- generated column's expression): dropping it is a catalogue change; adding it rewrites
-- rag.latest_docs once, working out the keys for each stored note from its title and aliases,
-- and builds the GIN index again. No note is read from its source, chunked or embedded again;
-- the table is locked while it is rewritten: 1.2 s median for 10,030 notes (a 66 MB table, on 2
-- shared cores; bench/name_keys_rewrite.py).
ALTER TABLE rag.latest_docs DROP COLUMN name_keys;
ALTER TABLE rag.latest_docs
    ADD COLUMN name_keys text[] GENERATED ALWAYS AS (rag.note_name_keys(title, aliases)) STORED;
CREATE INDEX latest_docs_name_keys_idx ON rag.latest_docs USING GIN (name_keys);
