-- Search support: a read-only role for the MCP server and other readers, lexeme statistics for
-- BM25 keyword ranking kept current by triggers, and indexes for the search filters.

-- ka_reader: roles are cluster-wide and every test database runs this file, so create it only
-- when missing, and tolerate a concurrent creator or a migration user without CREATEROLE.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ka_reader') THEN
        CREATE ROLE ka_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;
    WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot create role ka_reader; create it and grant read access by hand';
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ka_reader') THEN
        -- Belt and braces: every transaction of this role is read-only, whatever the client does.
        ALTER ROLE ka_reader SET default_transaction_read_only = on;
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO ka_reader', current_database());
        GRANT USAGE ON SCHEMA raw, rag, meta TO ka_reader;
        GRANT SELECT ON ALL TABLES IN SCHEMA raw, rag, meta TO ka_reader;
        ALTER DEFAULT PRIVILEGES IN SCHEMA raw, rag, meta GRANT SELECT ON TABLES TO ka_reader;
    END IF;
EXCEPTION
    WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot configure role ka_reader; grant it read access by hand';
END
$$;

-- Path-prefix filters (LIKE 'folder/%') and get_doc by path.
CREATE INDEX latest_docs_file_path_idx ON rag.latest_docs (file_path text_pattern_ops);
CREATE INDEX superseded_docs_superseded_by_idx ON rag.superseded_docs (superseded_by);

-- BM25 needs document frequencies and the average document length. They are maintained
-- incrementally by statement-level triggers on rag.chunks, so any writer keeps them right and a
-- read-only searcher never has to refresh anything. Document length is the number of distinct
-- lexemes (length(tsvector)), which Postgres stores in the tsvector header.
CREATE TABLE rag.keyword_lexemes (
    lexeme text PRIMARY KEY,
    ndoc bigint NOT NULL
);
CREATE TABLE rag.keyword_totals (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    ndocs bigint NOT NULL DEFAULT 0,
    total_length bigint NOT NULL DEFAULT 0
);
INSERT INTO rag.keyword_totals (id) VALUES (true);

-- Adds sign * (statistics of the given chunks). The totals row is updated first: it serialises
-- concurrent writers before they touch lexeme rows, so they can never deadlock on those.
CREATE FUNCTION rag.keyword_stats_add(delta_rows bigint, delta_length bigint, lexemes text[], counts bigint[])
RETURNS void LANGUAGE sql AS $$
    UPDATE rag.keyword_totals
    SET ndocs = ndocs + delta_rows, total_length = total_length + delta_length;
    INSERT INTO rag.keyword_lexemes AS k (lexeme, ndoc)
    SELECT l, n FROM unnest(lexemes, counts) AS u(l, n) ORDER BY l
    ON CONFLICT (lexeme) DO UPDATE SET ndoc = k.ndoc + EXCLUDED.ndoc;
    DELETE FROM rag.keyword_lexemes WHERE lexeme = ANY (lexemes) AND ndoc <= 0;
$$;

CREATE FUNCTION rag.chunks_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
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
        (SELECT count(*) FROM new_rows), (SELECT sum(length(tokens)) FROM new_rows), l, n);
    RETURN NULL;
END
$$;

CREATE FUNCTION rag.chunks_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
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
        -(SELECT count(*) FROM old_rows), -(SELECT sum(length(tokens)) FROM old_rows), l, n);
    RETURN NULL;
END
$$;

-- Updates only matter where the tokens changed; rows re-written with the same tokens cost a
-- join on the primary key and nothing else.
CREATE FUNCTION rag.chunks_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    l text[];
    n bigint[];
    changed bigint;
    len bigint;
BEGIN
    SELECT count(*), coalesce(sum(length(nr.tokens) - length(o.tokens)), 0) INTO changed, len
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

CREATE FUNCTION rag.chunks_stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rag.keyword_totals SET ndocs = 0, total_length = 0;
    DELETE FROM rag.keyword_lexemes;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON rag.chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION rag.chunks_stats_insert();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON rag.chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION rag.chunks_stats_delete();
CREATE TRIGGER chunks_stats_update AFTER UPDATE ON rag.chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION rag.chunks_stats_update();
CREATE TRIGGER chunks_stats_truncate AFTER TRUNCATE ON rag.chunks
    FOR EACH STATEMENT EXECUTE FUNCTION rag.chunks_stats_truncate();

-- Chunks written before this migration.
UPDATE rag.keyword_totals
SET ndocs = (SELECT count(*) FROM rag.chunks),
    total_length = (SELECT coalesce(sum(length(tokens)), 0) FROM rag.chunks);
INSERT INTO rag.keyword_lexemes (lexeme, ndoc)
SELECT u.lexeme, count(*) FROM rag.chunks c, unnest(c.tokens) u GROUP BY u.lexeme;

-- The tables above were created after the default privileges were set, so they are readable.
