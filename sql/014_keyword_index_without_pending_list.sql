-- The keyword (GIN) index takes new chunks straight into its tree rather than into a "pending
-- list" (fastupdate). Postgres scans the whole pending list, unsorted, on every keyword search
-- until a VACUUM merges it, and in a search store that grows by edits autovacuum comes rarely: at
-- 100,000 chunks a pending list left by a batch of writes made keyword search about twice as slow
-- (bench/results/search_latency.txt). Bulk loads drop the index and build it in one go, so only
-- small incremental writes pay the direct insert. Entries already pending are merged now.
DO $$
BEGIN
    IF to_regclass('rag.chunks_tokens_idx') IS NOT NULL THEN
        ALTER INDEX rag.chunks_tokens_idx SET (fastupdate = off);
        PERFORM gin_clean_pending_list('rag.chunks_tokens_idx'::regclass);
    END IF;
END
$$;
