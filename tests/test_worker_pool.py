"""Closing a worker pool ends, even when a worker will not stop: a pool broken by a killed worker
stops the others with SIGTERM and waits for them, and one that outlives it is killed."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from knowledge_assets.core import workers as core_workers
from knowledge_assets.core.workers import WorkerPool
from tests.process_support import unreaped, wait_for, worker_pids


def _ignore_sigterm() -> None:
    """A worker's start: outlive SIGTERM, as a worker stuck where the signal cannot end it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


BUSY = "KA_TEST_BUSY_DIR"


def _pids(batch: list[int]) -> list[int]:
    """Each item's worker; a negative item keeps its worker busy for an hour first, and says so
    with a file named after the worker in the folder ``$KA_TEST_BUSY_DIR``."""
    if any(x < 0 for x in batch):
        Path(os.environ[BUSY], str(os.getpid())).touch()
        time.sleep(3600)
    return [os.getpid() for _ in batch]


def _ignores_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def test_a_worker_that_outlives_sigterm_is_killed_when_the_broken_pool_closes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(core_workers, "CLOSE_GRACE_SECONDS", 1.0)
    monkeypatch.setenv(BUSY, str(tmp_path))  # before the workers start: they read it
    pool = WorkerPool(_pids, 2, spawn=True, start=_ignore_sigterm)
    executor = pool._pool
    assert executor is not None
    pids = worker_pids(executor)
    try:
        assert len(pids) == 2
        started = wait_for(lambda: all(_ignores_sigterm(p) for p in pids), 30, every=0.05)
        assert started, "workers never started"
        # Both workers busy: the one left after the kill neither stops for SIGTERM nor reads
        # the pool's request to stop, as a worker stuck in a long batch.
        pool.submit([-1])
        pool.submit([-2])
        busy = wait_for(lambda: {int(f.name) for f in tmp_path.iterdir()} == set(pids), 30, 0.05)
        assert busy, "the workers never took their batches"
        os.kill(pids[0], signal.SIGKILL)
        broken = wait_for(lambda: bool(executor._broken), 30, every=0.05)
        assert broken, "the pool never noticed the killed worker"
        closing = threading.Thread(target=pool.close, daemon=True)
        closing.start()
        closing.join(60)
        assert not closing.is_alive(), "closing the pool waited for a worker that never stops"
        assert not unreaped(pids), "a worker was left behind"
    finally:
        for pid in pids:  # a failed run of this test must not leave a worker that ignores SIGTERM
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_closing_an_idle_pool_stops_its_workers_without_killing_them() -> None:
    pool = WorkerPool(_pids, 2, spawn=True)
    executor = pool._pool
    assert executor is not None
    processes = list(executor._processes.values())
    assert len(pool.map(list(range(8)))()) == 8
    pool.close()
    assert [p.exitcode for p in processes] == [0, 0]
