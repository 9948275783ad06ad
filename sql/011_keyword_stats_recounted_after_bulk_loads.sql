-- A bulk chunk load (a first build, or a re-chunk of most notes) counts the keyword statistics
-- once at its end instead of batch by batch: per batch of about 5,000 chunks, adding some 60,000
-- lexeme counts to rag.keyword_lexemes took about half of the server time of writing the chunks,
-- and a first build repeats that for every batch. A transaction that sets
-- rag.defer_keyword_stats = 'on' leaves the statistics to rag.keyword_stats_recount(): its chunk
-- writes only mark them stale, in the same transaction, so a run killed before its recount leaves
-- the mark for the next chunk refresh.
ALTER TABLE rag.keyword_totals ADD COLUMN IF NOT EXISTS stale boolean NOT NULL DEFAULT false;

-- True when this transaction's chunk writes leave the statistics to a recount, after marking
-- them stale. The mark is an update of the totals row even when it is already set: the row lock,
-- held until this transaction ends, makes a recount wait for these chunks to commit.
CREATE OR REPLACE FUNCTION rag.keyword_stats_deferred() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('rag.defer_keyword_stats', true), '') <> 'on' THEN
        RETURN false;
    END IF;
    UPDATE rag.keyword_totals SET stale = true;
    RETURN true;
END
$$;

-- Every statistic counted again from rag.chunks. The totals row is locked first, as writers
-- lock it: a writer that has not committed yet either committed before the counts below are
-- taken (each statement of this function sees what committed before it started), or applies
-- its own change after this transaction ends.
CREATE OR REPLACE FUNCTION rag.keyword_stats_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM rag.keyword_totals FOR UPDATE;
    DELETE FROM rag.keyword_lexemes;
    INSERT INTO rag.keyword_lexemes (lexeme, ndoc)
    SELECT u.lexeme, count(*) FROM rag.chunks c, unnest(tsvector_to_array(c.tokens)) u(lexeme)
    GROUP BY u.lexeme;
    UPDATE rag.keyword_totals
    SET ndocs = (SELECT count(*) FROM rag.chunks),
        total_length = (SELECT coalesce(sum(token_count), 0) FROM rag.chunks),
        stale = false;
END
$$;

-- The statement triggers of 010, each returning at once in a deferring transaction.
CREATE OR REPLACE FUNCTION rag.chunks_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l text[];
    n bigint[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) OR rag.keyword_stats_deferred() THEN
        RETURN NULL;  -- e.g. INSERT ... ON CONFLICT DO UPDATE that only updated
    END IF;
    SELECT array_agg(lexeme), array_agg(cnt) INTO l, n
    FROM (SELECT u.lexeme, count(*) AS cnt
          FROM new_rows r, unnest(tsvector_to_array(r.tokens)) u(lexeme) GROUP BY 1) s;
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
    IF NOT EXISTS (SELECT 1 FROM old_rows) OR rag.keyword_stats_deferred() THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(lexeme), array_agg(-cnt) INTO l, n
    FROM (SELECT u.lexeme, count(*) AS cnt
          FROM old_rows r, unnest(tsvector_to_array(r.tokens)) u(lexeme) GROUP BY 1) s;
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
    IF rag.keyword_stats_deferred() THEN
        RETURN NULL;
    END IF;
    SELECT count(*), coalesce(sum(nr.token_count - o.token_count), 0) INTO changed, len
    FROM new_rows nr JOIN old_rows o USING (id) WHERE nr.tokens IS DISTINCT FROM o.tokens;
    IF changed = 0 THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(lexeme), array_agg(cnt) INTO l, n
    FROM (SELECT u.lexeme, sum(t.sign) AS cnt
          FROM new_rows nr JOIN old_rows o USING (id),
              LATERAL (VALUES (nr.tokens, 1), (o.tokens, -1)) AS t(tokens, sign),
              unnest(tsvector_to_array(t.tokens)) u(lexeme)
          WHERE nr.tokens IS DISTINCT FROM o.tokens
          GROUP BY 1 HAVING sum(t.sign) <> 0) s;
    PERFORM rag.keyword_stats_add(0, len, l, n);
    RETURN NULL;
END
$$;

-- A TRUNCATE of rag.chunks leaves nothing to count: nothing is stale either.
CREATE OR REPLACE FUNCTION rag.chunks_stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rag.keyword_totals SET ndocs = 0, total_length = 0, stale = false;
    DELETE FROM rag.keyword_lexemes;
    RETURN NULL;
END
$$;
