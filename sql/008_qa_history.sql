-- Q&A history (seed 001): every answered question with its answer, cited notes, model and
-- tokens, grouped into conversations for follow-up questions. A schema of its own, so the
-- role that writes it (ka_qa_writer) can be granted exactly this one table.
CREATE SCHEMA IF NOT EXISTS qa;

CREATE TABLE qa.history (
    id uuid PRIMARY KEY,
    conversation_id uuid NOT NULL,
    question text NOT NULL,
    answer text NOT NULL,
    sources jsonb NOT NULL DEFAULT '[]',
    confidence text NOT NULL,
    model text NOT NULL,
    tokens_used int NOT NULL DEFAULT 0,
    response_ms real,
    -- clock_timestamp(): turns recorded in one transaction still keep their order
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX history_created_at_idx ON qa.history (created_at DESC, id);
CREATE INDEX history_conversation_idx ON qa.history (conversation_id, created_at);

-- ka_qa_writer: the HTTP API records answers as this role, which may read and append to
-- qa.history and nothing else. Roles are cluster-wide, so create it only when missing and
-- tolerate a migration user without CREATEROLE (the API then says how to set it up).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ka_qa_writer') THEN
        CREATE ROLE ka_qa_writer LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;
    WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot create role ka_qa_writer; create it and grant it INSERT, SELECT on qa.history';
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ka_qa_writer') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO ka_qa_writer', current_database());
        GRANT USAGE ON SCHEMA qa TO ka_qa_writer;
        GRANT SELECT, INSERT ON qa.history TO ka_qa_writer;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ka_reader') THEN
        GRANT USAGE ON SCHEMA qa TO ka_reader;
        GRANT SELECT ON qa.history TO ka_reader;
    END IF;
EXCEPTION
    WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot grant access to qa.history; grant ka_qa_writer INSERT, SELECT and ka_reader SELECT by hand';
END
$$;
