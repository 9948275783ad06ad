-- Embedding passes that have counted the chunk texts but not finished yet, with the snapshot they
-- counted in. Change records (rag.index_writes) are dropped only once every recorded pass and
-- every pass still running has seen them: otherwise a pass of one model that finished while a
-- pass of another was still embedding could drop a chunk write the other never saw, and the
-- other would then record itself complete without that chunk's vector.
CREATE TABLE IF NOT EXISTS rag.embedding_passes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model text NOT NULL,
    template text NOT NULL,
    counted pg_snapshot NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
);
