"""CPU-bound work of a first build spread over the machine's cores: forked worker processes
running one pure function over batches (parsing files, keyword tokenization).

Workers are forked where the platform can: ``spawn`` and ``forkserver`` re-import the caller's
main module in every worker, which for a Dagster run is the whole Dagster CLI, seconds per
worker; a fork starts at once, with what the caller already loaded (e.g. Sudachi's dictionary).
Workers only compute on the values they are handed, never on the caller's connections or
sources. With one worker the work runs in the calling process, where no start-up is paid.
A pool whose workers must not inherit the caller's state (a model engine's threads, which do not
survive a fork) spawns them instead and has each run a start function first.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# How long closing a pool waits for its workers to stop before it kills them. Idle workers stop
# at once; this bounds a close on the way out of an error, with batches still running.
CLOSE_GRACE_SECONDS = 10.0


def available_cores(setting: str | None = None) -> int:
    """Cores this process may use; the environment variable ``setting``, when set, overrides."""
    configured = os.environ.get(setting, "").strip() if setting else ""
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise ValueError(f"{setting}={configured!r}: expected a number of processes, e.g. 2")
        return int(configured)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def batch_size(items: int, workers: int) -> int:
    """Items per task: a few tasks per worker, so the workers finish close together."""
    return max(1, math.ceil(items / (max(1, workers) * 4)))


class Closing:
    """A context manager that closes what it manages on the way out, however it leaves."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.close()


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT back in this thread, so that processes started meanwhile inherit it blocked;
    an interrupt that arrives meanwhile is delivered on leaving, not lost.

    Ctrl-C reaches every process of the terminal's command. A helper process is stopped by the
    process that started it; taking Ctrl-C itself, it would only print a traceback (a Python
    one, often half-started)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _started() -> None:
    """A worker's first task: nothing, only so that it starts (see WorkerPool)."""


class WorkerPool(Closing, Generic[T, R]):
    """Runs ``fn`` (a module-level function from a batch to one result per item) on batches.

    ``submit(batch)`` returns a function that waits for and returns ``fn(batch)``: computed by a
    worker process when ``workers`` > 1, else when waited for. ``map(items)`` splits ``items``
    into a few tasks per worker and returns their results in order. ``spawn``: fresh worker
    processes, each running ``start(*start_args)`` before its first batch.
    """

    def __init__(
        self, fn: Callable[[list[T]], list[R]], workers: int, *, spawn: bool = False,
        start: Callable[..., None] | None = None, start_args: tuple[Any, ...] = (),
    ) -> None:  # fmt: skip
        self.fn = fn
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1:
            self._start(workers, spawn, start, start_args)

    def _start(
        self, workers: int, spawn: bool, start: Callable[..., None] | None,
        start_args: tuple[Any, ...],
    ) -> None:  # fmt: skip
        methods = multiprocessing.get_all_start_methods()
        method = "spawn" if spawn else "fork" if "fork" in methods else None
        self._pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context(method),
            initializer=start,
            initargs=start_args,
        )
        if method != "fork":
            # Start every worker now. Python starts spawned workers one per submit while none
            # is idle, so one may start while the pool breaks (a worker killed, say out of
            # memory); the executor's clean-up then misses it and waits for it forever, or the
            # submit fails with "handle is closed". Forked ones all start at the first submit.
            with interrupts_held():  # the pool's owner stops them (see close)
                for _ in range(workers):
                    self._pool.submit(_started)

    def submit(self, batch: Sequence[T]) -> Callable[[], list[R]]:
        items = list(batch)
        if self._pool is None or not items:
            return lambda: self.fn(items)
        with interrupts_held():  # a submit may start (fork) the workers
            return self._pool.submit(self.fn, items).result

    def map(self, items: Sequence[T]) -> Callable[[], list[R]]:
        if self._pool is None:
            return self.submit(items)
        size = batch_size(len(items), self.workers)
        waits = [self.submit(items[i : i + size]) for i in range(0, len(items), size)]
        return lambda: [result for wait in waits for result in wait()]

    def close(self) -> None:
        """Stop the workers; batches not started are dropped. Workers that have not stopped
        after ``CLOSE_GRACE_SECONDS`` are killed.

        A pool broken by a killed worker stops the others with SIGTERM and then waits for each
        of them, with no time limit. A worker once outlived its SIGTERM in the test suite, and
        closing the pool waited until the test's time limit; in a run that wait would never
        end. Killing the worker ends it."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # Private: the executor gives no other way to reach its worker processes.
        workers = list((getattr(pool, "_processes", None) or {}).values())
        closing = threading.Thread(
            target=pool.shutdown, kwargs={"cancel_futures": True}, daemon=True
        )
        closing.start()
        closing.join(CLOSE_GRACE_SECONDS)
        if closing.is_alive():
            for process in workers:
                with contextlib.suppress(OSError, ValueError):  # already gone or closed
                    process.kill()
            closing.join(CLOSE_GRACE_SECONDS)
