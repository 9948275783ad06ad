"""From a note to its chunks: the chunking strategies, the text each chunk is embedded as, its
keyword tokens (SudachiPy), and the set-based writes of ``rag.chunks``."""
