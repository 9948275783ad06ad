-- A bookmark file with a bad entry (not an object, a field that is not text, no text at all) is
-- no longer rejected as a whole: the bad entries are left out with a warning and the others
-- land. A file rejected for such an entry is read again at its next sync (an unchanged rejected
-- file is otherwise never read again); every other rejection stays as it is.
UPDATE raw.rejected_files
SET version = ''
WHERE reason LIKE 'not a bookmark file: body[%';
