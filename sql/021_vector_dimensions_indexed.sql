-- The check that every vector has its model's dimension (vectors_match_model_dimension) read
-- every vector in rag.embeddings, in every run of the job: 0.7-1.6 s at 10,000 notes. Each row's
-- dims already equals its vector's size (the CHECK of 001), so the check now compares dims with
-- the model's, and this index answers that with two short range scans per model. It is small:
-- one model and one size repeat in every entry, which B-tree deduplication stores once per page.
CREATE INDEX IF NOT EXISTS embeddings_model_dims_idx ON rag.embeddings (model, dims);
