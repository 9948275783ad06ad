-- Several sources in one store (seed 004): a registry of declared sources, one raw table per
-- source created on first sync, and the payload fields search returns (type, top_heading, url,
-- the heading path as a list, metadata inherited from the frontmatter).

-- Sources declared as components. A source whose declaration disappears is removed (its raw
-- table emptied, its notes deleted from latest_docs) by the next latest_docs run.
CREATE TABLE meta.sources (
    name text PRIMARY KEY,
    source_table text NOT NULL UNIQUE,
    kind text NOT NULL,
    doc_type text NOT NULL,
    content_type text NOT NULL,
    default_heading text,
    chunking jsonb NOT NULL DEFAULT '{}',
    chunking_sig text NOT NULL DEFAULT '',
    registered_at timestamptz NOT NULL DEFAULT now()
);

-- raw.docs_<source>: the same shape as raw.docs_local (generated has_body and indexes included).
CREATE FUNCTION raw.ensure_docs_table(name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF name !~ '^docs_[a-z][a-z0-9_]{0,40}$' THEN
        RAISE EXCEPTION 'invalid source table name %', name;
    END IF;
    EXECUTE format('CREATE TABLE IF NOT EXISTS raw.%I (LIKE raw.docs_local INCLUDING ALL)', name);
END
$$;

ALTER TABLE rag.latest_docs
    ADD COLUMN doc_type text NOT NULL DEFAULT 'markdown_note',
    ADD COLUMN top_heading text,
    ADD COLUMN url text;
CREATE INDEX latest_docs_doc_type_idx ON rag.latest_docs (doc_type);
CREATE INDEX latest_docs_top_heading_idx ON rag.latest_docs (top_heading);

ALTER TABLE rag.chunks
    ADD COLUMN heading_parts text[] NOT NULL DEFAULT '{}',
    ADD COLUMN url text,
    ADD COLUMN meta jsonb NOT NULL DEFAULT '{}';
