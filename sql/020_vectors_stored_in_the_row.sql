-- Vectors are kept in their table's rows rather than out of line. A 512-d vector (2 kB) was just
-- over the size at which Postgres moves a value out of line, so every vector read cost a lookup
-- in the TOAST table: ranking a 5,152-chunk store exactly by a scan of its vectors took 14-16 ms
-- with them out of line and 6-8 ms from the rows (bench/results/vector_paths.txt), and a
-- 10,000-note first build's HNSW index took 67.4 s and 67.7 s (bench/scale_steps.py). Rows up
-- to 8,160 bytes (vectors of up to about 2,000 dimensions) now stay whole; larger vectors still
-- go out of line. Vectors written before stay where they are until they are written again (a
-- re-embed, a new model).
ALTER TABLE rag.embeddings SET (toast_tuple_target = 8160);
