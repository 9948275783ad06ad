-- Which raw table each sync state belongs to. Sources that share a table (the GitHub source with
-- another prefix or branch) each keep their own last synced commit, but a sync under one key
-- changes the table for all of them: the next sync under another key must compare the whole
-- tree, not the diff since its own last commit (which would miss what the other one deleted or
-- added). States written before this column are NULL and take part in no such comparison.
ALTER TABLE meta.sync_state ADD COLUMN IF NOT EXISTS source_table text;
