-- Change records (rag.index_writes) made before the text log existed have no logged texts, and
-- 051 gave them texts_logged = true: a pass counting from a complete pass older than them would
-- have looked at none of their texts. They are marked unlogged, so the next pass of each model
-- counts every chunk text once. (Any record without logged texts is marked: at worst one more
-- full count.)
UPDATE rag.index_writes w SET texts_logged = false
WHERE w.texts_logged AND NOT EXISTS (SELECT 1 FROM rag.text_changes t WHERE t.xid = w.xid);
