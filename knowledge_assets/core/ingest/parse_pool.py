"""Parsing files (frontmatter YAML, hashes) spread over the machine's cores for a large sync
(:mod:`knowledge_assets.core.workers`).

Files are still read in the calling process, one after another: a source may be a network client
that forked processes must not share. Only their bytes go to the workers, which run the very same
parser, so what a sync records does not change; results keep the order of the files. A small
sync parses in the calling process.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from knowledge_assets.core.ingest.formats import parse_file
from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection
from knowledge_assets.core.workers import WorkerPool, available_cores

# Below this many files to parse, worker start-up costs more than it saves (10,000 notes of the
# scale bench parse in about 1.7 CPU-s: 0.17 ms a file).
PARALLEL_MIN_FILES = 1000

Parsed = ParsedDoc | Rejection
# (path, bytes) pairs in, one document or rejection per file out.
ParsePool = WorkerPool[tuple[str, bytes], Parsed]


def parse_one(path: str, data: bytes, max_bytes: int) -> Parsed:
    """Parse one file; whatever goes wrong with it becomes its rejection."""
    try:
        return parse_file(path, data, max_bytes)
    except Exception as exc:  # whatever one file does, the others must land
        return Rejection(path, f"could not be parsed: {type(exc).__name__}: {exc}"[:500])


def parse_many(files: Sequence[tuple[str, bytes]], max_bytes: int) -> list[Parsed]:
    """Parse these files, in order."""
    return [parse_one(path, data, max_bytes) for path, data in files]


def parse_pool_for(files: int, max_bytes: int) -> ParsePool:
    """Worker processes for a large sync, the calling process for a small one."""
    workers = available_cores() if files >= PARALLEL_MIN_FILES else 1
    return WorkerPool(partial(parse_many, max_bytes=max_bytes), workers)
