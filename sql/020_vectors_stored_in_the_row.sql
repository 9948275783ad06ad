-- Vectors are kept in their table's rows rather than out of line. A 512-d vector (2 kB) was just
-- over the size at which Postgres moves a value out of line, so every vector read cost a lookup
-- in the TOAST table: ranking a 5,152-chunk store exactly by a scan of its vectors took 13-15 ms
-- with them out of line and 5-7 ms from the rows. An iterative filtered index scan, which reads
-- the row of every vector it visits, pays for it: 4-7% longer at 10,000 notes filtered to a
-- tenth (bench/results/vector_paths.txt). A first build's HNSW index took as long either way.
-- Rows up to 8,160 bytes (vectors of up to about 2,000 dimensions) now stay whole; larger vectors
-- still go out of line. Vectors written before stay where they are until they are written again
-- (a re-embed, a new model).
ALTER TABLE rag.embeddings SET (toast_tuple_target = 8160);
