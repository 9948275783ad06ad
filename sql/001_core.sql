-- Core schema: raw documents per source, sync state, rejections, the latest-version table,
-- chunks and model-keyed embeddings. Append-only: change the schema in a new NNN_name.sql file.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS raw;
CREATE SCHEMA IF NOT EXISTS rag;
CREATE SCHEMA IF NOT EXISTS meta;

-- raw.{entity}_{source}: one table per source kind, same core columns (seed 000).
CREATE TABLE raw.docs_github (
    id uuid PRIMARY KEY,
    file_path text NOT NULL UNIQUE,
    frontmatter jsonb NOT NULL DEFAULT '{}',
    content text NOT NULL,
    content_hash text NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    version text NOT NULL, -- git blob SHA: an unchanged blob is never fetched again
    -- Computed once per write, so latest_docs never re-scans every body: a body of headings
    -- only counts as empty (seed 000).
    has_body boolean GENERATED ALWAYS AS (
        regexp_replace(content, '^[ \t]*#{1,6}([ \t][^\n]*)?$', '', 'gn') ~ '\S'
    ) STORED
);
CREATE INDEX docs_github_frontmatter_tags_idx ON raw.docs_github USING GIN ((frontmatter -> 'tags'));

CREATE TABLE raw.docs_local (
    id uuid PRIMARY KEY,
    file_path text NOT NULL UNIQUE,
    frontmatter jsonb NOT NULL DEFAULT '{}',
    content text NOT NULL,
    content_hash text NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    version text NOT NULL, -- size:mtime_ns: an untouched file is never read again
    -- Computed once per write, so latest_docs never re-scans every body: a body of headings
    -- only counts as empty (seed 000).
    has_body boolean GENERATED ALWAYS AS (
        regexp_replace(content, '^[ \t]*#{1,6}([ \t][^\n]*)?$', '', 'gn') ~ '\S'
    ) STORED
);
CREATE INDEX docs_local_frontmatter_tags_idx ON raw.docs_local USING GIN ((frontmatter -> 'tags'));

-- Files a source offered that could not be ingested, with the reason. A previously good version
-- of the same path stays in raw.* untouched.
CREATE TABLE raw.rejected_files (
    source_table text NOT NULL,
    file_path text NOT NULL,
    reason text NOT NULL,
    version text NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_table, file_path)
);

-- Where each source last synced to: a commit SHA (GitHub) or a tree fingerprint (local folder).
CREATE TABLE meta.sync_state (
    source_key text PRIMARY KEY,
    last_sha text,
    fingerprint text,
    synced_at timestamptz NOT NULL DEFAULT now()
);

-- latest_docs: the newest version of each note, no drafts, no empty bodies.
CREATE TABLE rag.latest_docs (
    id uuid PRIMARY KEY,
    source_table text NOT NULL,
    file_path text NOT NULL,
    title text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    aliases text[] NOT NULL DEFAULT '{}',
    content_type text,
    frontmatter jsonb NOT NULL DEFAULT '{}',
    content text NOT NULL,
    content_hash text NOT NULL,
    created date,
    updated date,
    UNIQUE (source_table, file_path)
);
CREATE INDEX latest_docs_tags_idx ON rag.latest_docs USING GIN (tags);

-- Versions excluded from latest_docs because another note names them in `previous`.
CREATE TABLE rag.superseded_docs (
    id uuid PRIMARY KEY,
    source_table text NOT NULL,
    file_path text NOT NULL,
    superseded_by text NOT NULL,
    in_cycle boolean NOT NULL DEFAULT false
);

-- chunks: one row per embeddable section; identity (document_id, chunk_index).
CREATE TABLE rag.chunks (
    id uuid PRIMARY KEY,
    document_id uuid NOT NULL REFERENCES rag.latest_docs (id) ON DELETE CASCADE,
    chunk_index int NOT NULL,
    heading text NOT NULL,
    parent_heading text NOT NULL,
    heading_path text NOT NULL DEFAULT '',
    content text NOT NULL,
    embedding_text text NOT NULL,
    text_hash text NOT NULL,
    token_estimate int NOT NULL,
    doc_hash text NOT NULL,
    chunker_sig text NOT NULL,
    tokens tsvector NOT NULL DEFAULT ''::tsvector,
    warning text,
    CONSTRAINT chunks_document_chunk_key UNIQUE (document_id, chunk_index)
);
CREATE INDEX chunks_text_hash_idx ON rag.chunks (text_hash);
CREATE INDEX chunks_tokens_idx ON rag.chunks USING GIN (tokens);

-- embeddings: keyed by (model, hash of the embedding text), so identical text is embedded once
-- per model. Untyped vector column; each model gets a partial HNSW expression index.
CREATE TABLE rag.embeddings (
    model text NOT NULL,
    text_hash text NOT NULL,
    dims int NOT NULL,
    embedding vector NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, text_hash),
    CHECK (vector_dims(embedding) = dims)
);

-- Models known to the store; exactly one may be active for search.
CREATE TABLE rag.models (
    model text PRIMARY KEY,
    provider text NOT NULL,
    dims int NOT NULL,
    max_tokens int NOT NULL,
    options jsonb NOT NULL DEFAULT '{}',
    is_active boolean NOT NULL DEFAULT false,
    completed_at timestamptz,
    registered_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX models_one_active_idx ON rag.models (is_active) WHERE is_active;
