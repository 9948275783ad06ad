-- Vectors are kept in their table's rows rather than out of line. A 512-d vector (2 kB) was just
-- over the size at which Postgres moves a value out of line, so every vector read cost a lookup
-- in the TOAST table: ranking 19,428 vectors exactly took 43-44 ms that way and 14 ms from the
-- rows, and an HNSW build took as long either way. Rows up to 8,160 bytes (vectors of up to
-- about 2,000 dimensions) now stay whole; larger vectors still go out of line. Vectors written
-- before stay where they are until they are written again (a re-embed, a new model).
ALTER TABLE rag.embeddings SET (toast_tuple_target = 8160);
