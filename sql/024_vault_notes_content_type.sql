-- Notes of the KA_SOURCE vault (raw.docs_local / raw.docs_github, no meta.sources row) were
-- written without a content type, so a search filtered to content type "notes" missed them all.
-- New rows get "notes"; this gives it to the rows already there (a note's own frontmatter
-- content_type or type would have been written instead of NULL).
UPDATE rag.latest_docs d SET content_type = 'notes'
WHERE d.content_type IS NULL
  AND NOT EXISTS (SELECT 1 FROM meta.sources s WHERE s.source_table = d.source_table);
