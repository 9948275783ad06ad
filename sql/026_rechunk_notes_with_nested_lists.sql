-- Frontmatter lists are now read as Obsidian reads them: nested lists flattened, each item once,
-- and only texts and numbers as tags. Notes whose lists read differently under that rule carry
-- those lists (tags, aliases, inherited fields) in their chunks' embedding texts, so their chunks
-- are made again at the next refresh; every other note keeps its chunks and keyword tokens.
-- A note is re-chunked when its first chunk's document hash no longer matches.
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND EXISTS (
      SELECT 1
      FROM jsonb_each(d.frontmatter) f
      WHERE jsonb_typeof(f.value) = 'array'
        AND (
            jsonb_path_exists(f.value, 'strict $[*] ? (@.type() != "string" && @.type() != "number")')
            OR (SELECT count(*) <> count(DISTINCT btrim(ltrim(btrim(e #>> '{}'), '#')))
                FROM jsonb_array_elements(f.value) e)
        )
  );
