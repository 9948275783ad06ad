-- The keyword tokens of the chunks of a renamed note. A note's id derives from its path, so a
-- renamed or moved note (a folder reorganized in Obsidian, a git mv) is a new row of
-- rag.latest_docs, and deleting the old row takes its chunks with it (ON DELETE CASCADE) before
-- the chunks step runs: every moved section was tokenized again. A latest refresh keeps the
-- tokens of the departing chunks whose note's content arrives at another path, by text hash and
-- chunker signature (tokens depend on nothing else), and the chunks step looks them up as it
-- looks up the tokens of chunks still stored; it empties the table when it is done. A cache:
-- unlogged, and lost without harm.
CREATE UNLOGGED TABLE rag.departed_tokens (
    text_hash text NOT NULL,
    chunker_sig text NOT NULL,
    tokens tsvector NOT NULL,
    token_count integer
);
CREATE INDEX departed_tokens_text_idx ON rag.departed_tokens (text_hash, chunker_sig);
