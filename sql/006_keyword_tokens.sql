-- BM25 document length in tokens. A chunk's tsvector holds one position per token: weight A for
-- heading tokens, D for body tokens (B and C mark the adjacent-token pair lexemes, which are not
-- tokens). The token count is stored beside it, computed by the database so that every writer
-- (INSERT, COPY) gets it, and the BM25 totals add it up instead of length(tsvector), which counts
-- distinct lexemes. A lexeme keeps at most 256 positions and positions stop at 16383, so the
-- count is exact for chunks of up to 16,383 tokens that repeat no word more than 256 times.

CREATE FUNCTION rag.tsvector_token_count(v tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (SELECT count(*)::integer FROM unnest(v) u, unnest(u.weights) w WHERE w IN ('A', 'D'));

ALTER TABLE rag.chunks
    ADD COLUMN token_count integer GENERATED ALWAYS AS (rag.tsvector_token_count(tokens)) STORED;

CREATE OR REPLACE FUNCTION rag.chunks_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l text[];
    n bigint[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;  -- e.g. INSERT ... ON CONFLICT DO UPDATE that only updated
    END IF;
    SELECT array_agg(lexeme), array_agg(cnt) INTO l, n
    FROM (SELECT u.lexeme, count(*) AS cnt FROM new_rows r, unnest(r.tokens) u GROUP BY 1) s;
    PERFORM rag.keyword_stats_add(
        (SELECT count(*) FROM new_rows), (SELECT coalesce(sum(token_count), 0) FROM new_rows), l, n);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION rag.chunks_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l text[];
    n bigint[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_rows) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(lexeme), array_agg(-cnt) INTO l, n
    FROM (SELECT u.lexeme, count(*) AS cnt FROM old_rows r, unnest(r.tokens) u GROUP BY 1) s;
    PERFORM rag.keyword_stats_add(
        -(SELECT count(*) FROM old_rows), -(SELECT coalesce(sum(token_count), 0) FROM old_rows), l, n);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION rag.chunks_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l text[];
    n bigint[];
    changed bigint;
    len bigint;
BEGIN
    SELECT count(*), coalesce(sum(nr.token_count - o.token_count), 0) INTO changed, len
    FROM new_rows nr JOIN old_rows o USING (id) WHERE nr.tokens IS DISTINCT FROM o.tokens;
    IF changed = 0 THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(lexeme), array_agg(cnt) INTO l, n
    FROM (SELECT u.lexeme, sum(t.sign) AS cnt
          FROM new_rows nr JOIN old_rows o USING (id),
              LATERAL (VALUES (nr.tokens, 1), (o.tokens, -1)) AS t(tokens, sign),
              unnest(t.tokens) u
          WHERE nr.tokens IS DISTINCT FROM o.tokens
          GROUP BY 1 HAVING sum(t.sign) <> 0) s;
    PERFORM rag.keyword_stats_add(0, len, l, n);
    RETURN NULL;
END
$$;

-- Chunks written before this migration: their tsvectors came from to_tsvector (every position
-- weight D), so their token count is already right; only the total changes meaning.
UPDATE rag.keyword_totals SET total_length = (SELECT coalesce(sum(token_count), 0) FROM rag.chunks);
