-- Notes whose chunking made no chunk at all (a note of comments or a template's %% %% alone, a
-- bookmark file whose list of articles is empty), with the content and chunker settings they
-- were chunked with. The chunk refresh finds the notes to chunk by their first chunk: these have
-- none, so every run chunked them again, and said so, forever. A note whose content changes
-- no longer matches its row and is chunked again; a deleted note takes its row with it.
CREATE TABLE rag.chunkless_docs (
    document_id uuid PRIMARY KEY REFERENCES rag.latest_docs (id) ON DELETE CASCADE,
    doc_hash text NOT NULL,
    chunker_sig text NOT NULL
);
