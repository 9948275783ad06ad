-- Embedding inputs: which vectors of a model stand for which chunk. A chunk (identified by
-- rag.chunks.text_hash, the hash of its seed 000 text, which covers every field a template can
-- use) is rendered with the model's template and, when it exceeds the model's input limit, split
-- into parts; each part's text is embedded once per model and keyed by its own hash in
-- rag.embeddings. Chunks therefore never depend on the model, and a model with a small input
-- limit searches an over-long chunk by its best part.
CREATE TABLE rag.embedding_inputs (
    model text NOT NULL,
    template text NOT NULL,
    chunk_hash text NOT NULL,
    part int NOT NULL,
    text_hash text NOT NULL,
    PRIMARY KEY (model, template, chunk_hash, part)
);
CREATE INDEX embedding_inputs_text_idx ON rag.embedding_inputs (model, text_hash);
CREATE INDEX embedding_inputs_chunk_idx ON rag.embedding_inputs (chunk_hash);

-- The template search reads for each model. Models stored before templates embedded seed 000's
-- text of each chunk whole, so their vectors map one to one.
ALTER TABLE rag.models ADD COLUMN template text NOT NULL DEFAULT 'seed000';
INSERT INTO rag.embedding_inputs (model, template, chunk_hash, part, text_hash)
SELECT model, 'seed000', text_hash, 0, text_hash FROM rag.embeddings;

-- A vector that is deleted takes its input rows with it, so its chunk counts as missing and the
-- next run embeds it again.
ALTER TABLE rag.embedding_inputs ADD CONSTRAINT embedding_inputs_vector_fk
    FOREIGN KEY (model, text_hash) REFERENCES rag.embeddings (model, text_hash) ON DELETE CASCADE;
