-- Latest notes that could not be chunked or embedded, with the reason: the run goes on without
-- them, the asset checks list them, and `get` explains why such a note is not searchable.
-- A note's row is cleared when the step succeeds for it (and goes with the note).
CREATE TABLE rag.note_failures (
    document_id uuid NOT NULL REFERENCES rag.latest_docs (id) ON DELETE CASCADE,
    step text NOT NULL CHECK (step IN ('chunks', 'embeddings')),
    reason text NOT NULL,
    doc_hash text NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, step)
);
