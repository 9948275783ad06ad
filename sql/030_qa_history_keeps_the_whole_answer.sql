-- A past answer can be opened again as it was first shown: the history keeps the answer's
-- metadata (notes retrieved, timings, tokens, context strategy…) and its warnings besides the
-- columns 008 gave it. Entries recorded before this keep NULL in both and open with what they
-- have (model, tokens and response time from their own columns). Nullable columns with no
-- default: adding them rewrites no row. The table-wide grants of 008 cover them.
ALTER TABLE qa.history
    ADD COLUMN IF NOT EXISTS metadata jsonb,
    ADD COLUMN IF NOT EXISTS warnings jsonb;
