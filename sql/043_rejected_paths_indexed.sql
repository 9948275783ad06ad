-- Whether the file at a path was rejected, and why, is looked up by path on every note view and
-- every `get` (sql/041's Unicode-form rule: the path as stored, or equal once both are NFC). The
-- primary key leads with the source, so the lookup read every rejected file: a vault with 2,000
-- of them (a folder of Shift_JIS exports) spent 5-6 ms of each note view on it. These indexes
-- serve both halves of the rule, with or without a source named. A server whose encoding is not
-- UTF-8 cannot normalize: there only the path as stored is compared, and indexed.
CREATE INDEX IF NOT EXISTS rejected_files_file_path_idx ON raw.rejected_files (file_path);
DO $$
BEGIN
    IF current_setting('server_encoding') = 'UTF8' THEN
        CREATE INDEX IF NOT EXISTS rejected_files_path_nfc_idx
            ON raw.rejected_files (normalize(file_path, NFC));
    END IF;
END
$$;
