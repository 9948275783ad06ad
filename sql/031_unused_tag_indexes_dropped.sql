-- Three GIN indexes no query reads: tag filters read latest_docs.tag_paths (sql/027, sql/029),
-- and the raw tables' tags are only read whole, by note. Each still cost every write of a note.
DROP INDEX IF EXISTS raw.docs_github_frontmatter_tags_idx;
DROP INDEX IF EXISTS raw.docs_local_frontmatter_tags_idx;
DROP INDEX IF EXISTS rag.latest_docs_tags_idx;
