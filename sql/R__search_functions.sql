-- SQL entry points for search (seeds 000 and 003), for clients that call the database directly.
-- The Python search (knowledge_assets.core.search) builds richer queries itself.
-- Re-applied whenever this file changes; DROP first so a changed result type can be replaced.

DROP FUNCTION IF EXISTS rag.search_chunks(vector, text[], int, float, text);
-- Vector search over the latest notes, through each model's embedding inputs (a chunk embedded
-- in parts scores as its best part). model NULL means the active model; filter_tags matches any
-- of the tags or a tag nested under one, in any case, as the Python search's tag filter does.
-- Unfiltered queries use the model's partial HNSW index (the model name and the dimension are
-- spliced in as literals so the planner can match the index predicate); filtered ones scan the
-- matching chunks exactly, because HNSW post-filtering can return too few rows.
CREATE FUNCTION rag.search_chunks(
    query_embedding vector,
    filter_tags text[] DEFAULT NULL,
    match_count int DEFAULT 5,
    similarity_threshold float DEFAULT 0.7,
    model text DEFAULT NULL
)
RETURNS TABLE (
    id uuid,
    title text,
    heading text,
    parent_heading text,
    content text,
    file_path text,
    similarity float
)
LANGUAGE plpgsql STABLE
SET search_path = rag, public
AS $$
DECLARE
    m text := coalesce(model, (SELECT r.model FROM rag.models r WHERE r.is_active));
    t text := (SELECT r.template FROM rag.models r WHERE r.model = m);
    dims int := vector_dims(query_embedding);
    dist text;
BEGIN
    IF m IS NULL THEN
        RAISE EXCEPTION 'no active embedding model: run the embeddings asset first';
    END IF;
    IF filter_tags IS NULL THEN
        dist := format('(e.embedding::halfvec(%s)) <=> $1::halfvec(%s)', dims, dims);
    ELSE
        dist := 'e.embedding <=> $1';  -- does not match the index expression: exact scan
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT b.id, b.title, b.heading, b.parent_heading, b.content, b.file_path,'
        ' (1 - b.dist)::float FROM (SELECT DISTINCT ON (c.id) c.id, d.title, c.heading,'
        ' c.parent_heading, c.content, d.file_path, s.dist'
        ' FROM (SELECT e.text_hash, %1$s AS dist FROM rag.embeddings e'
        '       WHERE e.model = %2$L %3$s ORDER BY %1$s LIMIT $3 * 4 + 40) s'
        ' JOIN rag.embedding_inputs i ON i.model = %2$L AND i.template = %4$L'
        '  AND i.text_hash = s.text_hash'
        ' JOIN rag.chunks c ON c.text_hash = i.chunk_hash'
        ' JOIN rag.latest_docs d ON d.id = c.document_id'
        ' WHERE ($2 IS NULL OR d.tag_paths && rag.tag_keys($2)) AND 1 - s.dist >= $4'
        ' ORDER BY c.id, s.dist) b ORDER BY b.dist, b.id LIMIT $3',
        dist, m,
        CASE WHEN filter_tags IS NULL THEN '' ELSE
            'AND EXISTS (SELECT 1 FROM rag.embedding_inputs i2 JOIN rag.chunks c2'
            ' ON c2.text_hash = i2.chunk_hash JOIN rag.latest_docs d2 ON d2.id = c2.document_id'
            ' WHERE i2.model = e.model AND i2.text_hash = e.text_hash'
            ' AND d2.tag_paths && rag.tag_keys($2))'
        END, t)
    USING query_embedding, filter_tags, match_count, similarity_threshold;
END
$$;

-- Tags of the latest notes with the number of notes carrying each, most used first. Tags fold
-- case (rag.tag_key, sql/029) and Unicode form (sql/055): Project and project are one entry,
-- shown in its most common spelling (on a tie, a composed one, as typed, before a decomposed one
-- that prints alike; then the first in code point order). A note carrying two spellings counts
-- once: only its first spelling of the tag counts it. One pass over the tags (a join of the spellings
-- with per-note distinct tags took twice as long at 50,000 notes).
CREATE OR REPLACE FUNCTION rag.list_all_tags()
RETURNS TABLE (tag text, count bigint)
LANGUAGE sql STABLE
AS $$
    SELECT (array_agg(s.tag ORDER BY s.notes DESC, s.tag IS NFC NORMALIZED DESC,
                      s.tag COLLATE "C"))[1] AS tag,
           sum(s.counted)::bigint AS count
    FROM (
        SELECT t.key, t.tag, count(*) AS notes, count(*) FILTER (WHERE t.first) AS counted
        FROM rag.latest_docs d, LATERAL (
            SELECT u.tag, rag.tag_key(u.tag) AS key,
                   u.n = min(u.n) OVER (PARTITION BY rag.tag_key(u.tag)) AS first
            FROM unnest(d.tags) WITH ORDINALITY AS u(tag, n)
        ) t
        GROUP BY t.key, t.tag
    ) s
    GROUP BY s.key
    ORDER BY count DESC, tag
$$;
