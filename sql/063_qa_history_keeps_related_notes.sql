-- An answer that found nothing lists the notes search did find (none of them cited), so that
-- a reader can still open them; the history keeps that list, so the answer opens again as it
-- was first shown. Entries recorded before this keep NULL and open with an empty list. A
-- nullable column with no default: adding it rewrites no row. The table-wide grants of 008
-- cover it.
ALTER TABLE qa.history ADD COLUMN IF NOT EXISTS related jsonb;
