-- The keyword (GIN) index keeps its pending list again (fastupdate, Postgres' default): taking
-- every entry straight into the tree made a 5,000-chunk write 2-3x slower. Keyword searches
-- still find no pending list to scan: each chunk refresh now merges it at its end
-- (chunk_writer.merge_keyword_pending).
DO $$
BEGIN
    IF to_regclass('rag.chunks_tokens_idx') IS NOT NULL THEN
        ALTER INDEX rag.chunks_tokens_idx RESET (fastupdate);
    END IF;
END
$$;
