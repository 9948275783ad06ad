-- The input-limit check asks for the chunks longer than each model's limit after every run; with
-- this index it reads only those chunks instead of every chunk's row (185 ms at 194,000 chunks).
CREATE INDEX IF NOT EXISTS chunks_token_estimate_idx ON rag.chunks (token_estimate);
