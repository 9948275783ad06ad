"""Keyword tokenization spread over the machine's cores (:mod:`knowledge_assets.core.workers`).

SudachiPy holds the GIL while it analyses text, so threads do not help: a first build hands
batches of texts to forked worker processes, which start with the dictionary the caller loaded
before forking them. Small refreshes tokenize in the calling process.
"""

from __future__ import annotations

from knowledge_assets.core.chunks.tokenize import Keywords, chunk_keywords_batch
from knowledge_assets.core.workers import WorkerPool, available_cores

# Below this many notes to re-chunk, worker start-up costs more than it saves.
PARALLEL_MIN_NOTES = 100

# (headings, body) pairs in, (tsvector literal, token count) out.
Tokenizer = WorkerPool[tuple[str, str], Keywords]


def tokenizer(workers: int) -> Tokenizer:
    """A tokenizer with ``workers`` processes (1: the calling process)."""
    if workers > 1:
        chunk_keywords_batch([("辞書", "")])  # load the dictionary once, before the workers fork
    return WorkerPool(chunk_keywords_batch, workers)


def tokenizer_for(notes: int) -> Tokenizer:
    """Worker processes for a large refresh (``KA_TOKENIZE_WORKERS`` of them, else one per
    core), the calling process for a small one."""
    return tokenizer(available_cores("KA_TOKENIZE_WORKERS") if notes >= PARALLEL_MIN_NOTES else 1)
