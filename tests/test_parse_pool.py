"""A large sync parses in worker processes: the same documents and rejections, in the same order,
as parsing in the calling process, on an adversarial vault (bad YAML, limits, odd names and
encodings, broken links)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge_assets.core import workers as core_workers
from knowledge_assets.core.ingest import parse_pool, sync
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES, ParsedDoc, Rejection
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.local import LocalSource
from tests.messy_vault import build


def _parse(root: Path) -> tuple[list[ParsedDoc | Rejection], int]:
    source = LocalSource(root)
    changes = source.changes(None, {})
    report = sync.SyncReport(source=source.key, head=changes.head, base=None)
    parsed = sync._fetch_and_parse(
        source, changes, DEFAULT_MAX_BYTES, report, Progress("raw_docs", "files")
    )
    return parsed, report.fetched


def test_worker_processes_parse_exactly_what_the_calling_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    monkeypatch.setattr(sync, "parse_pool_for", forced)
    parallel, _ = _parse(tmp_path / "vault")
    assert workers == [2]  # the pool really ran in worker processes
    assert parallel == serial


@pytest.mark.parametrize(("files", "workers", "size"), [(0, 2, 1), (10, 2, 2), (10_000, 2, 1250)])
def test_each_worker_gets_a_few_tasks(files: int, workers: int, size: int) -> None:
    assert core_workers.batch_size(files, workers) == size
