-- A comment opened in a paragraph and closed on a later line of it is cut from passages as the
-- note page cuts it (sql/042), and the page's paragraph now decides how far it may run: a line
-- of inline HTML (`<b>…</b>`), a number that starts no list (`1984. …`, `2) …`), an empty list
-- marker or a `|` line that heads no table goes on with the paragraph, where it ended it; a
-- quote inside a quote, a footnote's definition and a table's header end it, where they went
-- on with it. Only notes holding a comment opener can read differently, so only they are
-- re-chunked at the next refresh (unchanged texts keep their vectors and keyword tokens).
UPDATE rag.chunks c
SET doc_hash = ''
FROM rag.latest_docs d
WHERE c.document_id = d.id
  AND c.chunk_index = 0
  AND (strpos(d.content, '%%') > 0 OR strpos(d.content, '<!--') > 0);
