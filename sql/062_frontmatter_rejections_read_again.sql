-- Files rejected for their frontmatter are read again at their next sync (an unchanged rejected
-- file is otherwise never read again):
-- - a note whose first line is a horizontal rule of four or more dashes (`----`) no longer opens
--   frontmatter (only `---` does, as in Obsidian), so one rejected as `frontmatter is not a
--   mapping` or as malformed YAML for the prose under its rule now lands;
-- - a control character or a Unicode line separator is now named with its line and the fix;
-- - an explicit `!!timestamp` that holds no date is kept as written, where it was rejected as
--   `could not be parsed: AttributeError`.
-- Every other rejection stays as it is.
UPDATE raw.rejected_files
SET version = ''
WHERE reason LIKE 'frontmatter is not a mapping%'
   OR reason LIKE 'malformed YAML frontmatter%'
   OR reason LIKE 'could not be parsed: AttributeError%';
