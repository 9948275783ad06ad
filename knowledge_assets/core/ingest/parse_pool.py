"""Parsing files (frontmatter YAML, hashes) spread over the machine's cores for a large sync.

Files are still read in the calling process, one after another: a source may be a network client
that forked processes must not share. Only their bytes go to worker processes, forked (as the
keyword tokenizer's are: a fork starts at once), which run the very same parser, so what a sync
records does not change; results keep the order of the files. A small sync parses in the calling
process, where no worker start-up is paid.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType

from knowledge_assets.core.ingest.formats import parse_file
from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection

# Below this many files to parse, worker start-up costs more than it saves (10,000 notes of the
# scale bench parse in about 1.7 CPU-s: 0.17 ms a file).
PARALLEL_MIN_FILES = 1000

Parsed = ParsedDoc | Rejection


def parse_one(path: str, data: bytes, max_bytes: int) -> Parsed:
    """Parse one file; whatever goes wrong with it becomes its rejection."""
    try:
        return parse_file(path, data, max_bytes)
    except Exception as exc:  # whatever one file does, the others must land
        return Rejection(path, f"could not be parsed: {type(exc).__name__}: {exc}"[:500])


def _parse_many(files: Sequence[tuple[str, bytes]], max_bytes: int) -> list[Parsed]:
    return [parse_one(path, data, max_bytes) for path, data in files]


def available_cores() -> int:
    """Cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class ParsePool:
    """``submit(files)`` returns a function that waits for and returns the parsed files, in
    order; parsed by worker processes when ``workers`` > 1, else on the call."""

    def __init__(self, workers: int, max_bytes: int) -> None:
        self.workers = workers
        self.max_bytes = max_bytes
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self._pool = ProcessPoolExecutor(workers, mp_context=context)

    def submit(self, files: Sequence[tuple[str, bytes]]) -> Callable[[], list[Parsed]]:
        if self._pool is None or not files:
            return lambda: _parse_many(files, self.max_bytes)
        future: Future[list[Parsed]] = self._pool.submit(_parse_many, list(files), self.max_bytes)
        return future.result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.close()


def parse_pool_for(files: int, max_bytes: int) -> ParsePool:
    """Worker processes for a large sync, the calling process for a small one."""
    return ParsePool(available_cores() if files >= PARALLEL_MIN_FILES else 1, max_bytes)


def batch_size(files: int, workers: int) -> int:
    """Files per worker task: a few tasks per worker, so they finish close together."""
    return max(1, math.ceil(files / (max(1, workers) * 4)))
