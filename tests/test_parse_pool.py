"""A large sync parses in worker processes: the same documents and rejections, in the same order,
as parsing in the calling process, on an adversarial vault (bad YAML, limits, odd names and
encodings, broken links)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge_assets.core import workers as core_workers
from knowledge_assets.core.ingest import fetching, parse_pool
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES, ParsedDoc, Rejection
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.local import LocalSource
from tests.messy_vault import build


class _CountingSource(LocalSource):
    """A local source that counts the files it has read."""

    reads = 0

    def read(self, path: str, limit: int | None = None) -> bytes:
        self.reads += 1
        return super().read(path, limit)


def _batches(
    source: LocalSource,
) -> tuple[Iterator[list[ParsedDoc | Rejection]], SyncReport]:
    changes = source.changes(None, {})
    report = SyncReport(source=source.key, head=changes.head, base=None)
    batches = fetching.fetch_and_parse(
        source, changes, DEFAULT_MAX_BYTES, report, Progress("raw_docs", "files")
    )
    return batches, report


def _parse(root: Path) -> tuple[list[ParsedDoc | Rejection], int]:
    batches, report = _batches(LocalSource(root))
    parsed = [p for batch in batches for p in batch]
    return parsed, report.fetched


@pytest.mark.parametrize("max_batch", [3, 500])
def test_worker_processes_parse_exactly_what_the_calling_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_batch: int
) -> None:
    monkeypatch.setattr(fetching, "MAX_PARSE_BATCH", max_batch)
    build(tmp_path / "vault", tmp_path / "outside")
    serial, fetched = _parse(tmp_path / "vault")
    assert fetched == len(serial) > 100
    assert any(isinstance(p, Rejection) for p in serial)
    assert any(isinstance(p, ParsedDoc) for p in serial)

    workers: list[int] = []
    pool_for = parse_pool.parse_pool_for

    def forced(files: int, max_bytes: int) -> parse_pool.ParsePool:
        pool = pool_for(files, max_bytes)
        workers.append(pool.workers)
        return pool

    monkeypatch.setattr(parse_pool, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parse_pool, "available_cores", lambda: 2)
    monkeypatch.setattr(fetching, "parse_pool_for", forced)
    parallel, _ = _parse(tmp_path / "vault")
    assert workers == [2]  # the pool really ran in worker processes
    assert parallel == serial


@pytest.mark.parametrize("workers", [1, 2])
def test_parsed_files_come_out_before_every_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A large first sync holds a few batches of files at a time, not the whole vault."""
    monkeypatch.setattr(fetching, "MAX_PARSE_BATCH", 5)
    monkeypatch.setattr(parse_pool, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parse_pool, "available_cores", lambda: workers)
    build(tmp_path / "vault", tmp_path / "outside")
    source = _CountingSource(tmp_path / "vault")
    batches, report = _batches(source)
    first = next(batches)
    read_by_then = source.reads
    rest = [p for batch in batches for p in batch]
    assert len(first) <= 5 and source.reads > 100
    # 2 batches per worker may wait, and the next one is being filled
    assert read_by_then <= (2 * workers + 2) * 5
    assert len(first) + len(rest) == report.fetched


@pytest.mark.parametrize(("files", "workers", "size"), [(0, 2, 1), (10, 2, 2), (10_000, 2, 1250)])
def test_each_worker_gets_a_few_tasks(files: int, workers: int, size: int) -> None:
    assert core_workers.batch_size(files, workers) == size
