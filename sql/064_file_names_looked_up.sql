-- A note is also looked up by its file name (known-item lookup), as Obsidian's quick switcher
-- finds it: the name a vault shows for a note is its file's, and a note whose title or H1 says
-- something else (20251230_rag-design.md titled RAG設計メモ, a daily note 2026-01-10.md headed
-- 2026年1月10日) was not found by it. Both the file name without its extension and seed 000's
-- slug (that name less a prefix_, core/chunks/chunk_text.slug_from_filename) name the note;
-- core/search/title_match.file_name_keys gives the same pair, and tests check that both agree.
-- chr(92) is a backslash (a path written the Windows way), spelt so that the literal reads the
-- same whatever standard_conforming_strings is; [.] rather than an escaped dot, likewise.
CREATE OR REPLACE FUNCTION rag.file_name_keys(file_path text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $fn$
SELECT ARRAY[
    coalesce(rag.title_key(CASE WHEN stem <> '' THEN stem ELSE name END), ''),
    coalesce(rag.title_key(CASE WHEN slug <> '' THEN slug WHEN stem <> '' THEN stem ELSE name END), '')]
FROM (SELECT regexp_replace(translate(file_path, chr(92), '/'), '^.*/', '') AS name) n,
    LATERAL (SELECT CASE WHEN strpos(name, '.') > 0 THEN regexp_replace(name, '[.][^.]*$', '')
        ELSE name END AS stem) s,
    LATERAL (SELECT CASE WHEN strpos(stem, '_') > 0 THEN substr(stem, strpos(stem, '_') + 1)
        ELSE stem END AS slug) g
$fn$;

-- The keys a note is named by, as sql/058 placed them (1 the title's, 2 and 3 its short names',
-- then its aliases'), followed by its file name's two: the lookup ranks the places after the
-- third as it ranks aliases, names the person gave the note.
CREATE OR REPLACE FUNCTION rag.note_name_keys(title text, aliases text[], file_path text)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
SELECT rag.note_name_keys(title, aliases) || coalesce(rag.file_name_keys(file_path), ARRAY['', ''])
$fn$;

-- As in sql/058, the stored column is made again with the new keys: rag.latest_docs is rewritten
-- once (1.2 s for 10,030 notes there), and no note is read, chunked or embedded again.
ALTER TABLE rag.latest_docs DROP COLUMN name_keys;
ALTER TABLE rag.latest_docs ADD COLUMN name_keys text[]
    GENERATED ALWAYS AS (rag.note_name_keys(title, aliases, file_path)) STORED;
CREATE INDEX latest_docs_name_keys_idx ON rag.latest_docs USING GIN (name_keys);
