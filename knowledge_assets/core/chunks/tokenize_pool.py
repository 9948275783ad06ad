"""Keyword tokenization spread over the machine's cores.

SudachiPy holds the GIL while it analyses text, so threads do not help: a first build hands
batches of texts to worker processes. They are forked (where the platform can): ``spawn`` and
``forkserver`` re-import the caller's main module in every worker, which for a Dagster run is
the whole Dagster CLI, seconds per worker; a fork starts at once, with the dictionary the caller
already loaded. Workers only tokenize strings: they never touch the caller's connections.
Small refreshes tokenize in the calling process, where no worker start-up is paid.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType

from knowledge_assets.core.chunks.tokenize import chunk_tsvectors

# Below this many notes to re-chunk, worker start-up costs more than it saves.
PARALLEL_MIN_NOTES = 100


def available_cores() -> int:
    """Cores this process may use (``KA_TOKENIZE_WORKERS`` overrides)."""
    configured = os.environ.get("KA_TOKENIZE_WORKERS", "").strip()
    if configured:
        return max(1, int(configured))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Tokenizer:
    """``submit(sources)`` returns a function that waits for and returns the tsvector literals
    of these (headings, body) pairs."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            chunk_tsvectors([("辞書", "")])  # load the dictionary once, before the workers fork
            self._pool = ProcessPoolExecutor(workers, mp_context=context)

    def submit(self, texts: Sequence[tuple[str, str]]) -> Callable[[], list[str]]:
        if self._pool is None or not texts:
            return lambda: chunk_tsvectors(texts)
        size = max(1, math.ceil(len(texts) / (self.workers * 4)))
        futures: list[Future[list[str]]] = [
            self._pool.submit(chunk_tsvectors, list(texts[i : i + size]))
            for i in range(0, len(texts), size)
        ]
        return lambda: [token for f in futures for token in f.result()]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> Tokenizer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.close()


def tokenizer_for(notes: int) -> Tokenizer:
    """Worker processes for a large refresh, the calling process for a small one."""
    return Tokenizer(available_cores() if notes >= PARALLEL_MIN_NOTES else 1)
