-- Chunk texts, keyword tokens and vectors are stored out of line without compression. Postgres
-- tries to compress every value of a row over about 2 kB before moving it out of line; Japanese
-- text, tsvectors and float vectors hardly compress (2% of the bytes of a 194,330-chunk replica
-- store), so the attempt only cost CPU: inserting that store's chunk rows again took 5.2-5.4 s
-- of server CPU without it and 8.5-9.9 s with it. Rows written before keep their form.
ALTER TABLE rag.chunks
    ALTER COLUMN content SET STORAGE EXTERNAL,
    ALTER COLUMN embedding_text SET STORAGE EXTERNAL,
    ALTER COLUMN tokens SET STORAGE EXTERNAL;
ALTER TABLE rag.embeddings ALTER COLUMN embedding SET STORAGE EXTERNAL;
