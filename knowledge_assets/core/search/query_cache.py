"""The query-embedding cache (seed 001): the same question asked again within an hour is not
embedded again. Least recently used entries go first once ``maxsize`` is reached."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

TTL_SECONDS = 3600.0
MAX_ENTRIES = 1024


class QueryCache:
    """An LRU of query vectors with a time-to-live, safe to share between threads."""

    def __init__(
        self,
        maxsize: int = MAX_ENTRIES,
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        # key -> (embedder, vector, stored at). The embedder is kept so that its id, part of
        # the key, cannot be reused by another object while the entry lives.
        self._entries: OrderedDict[tuple[int, str], tuple[Any, list[float], float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get_or_embed(
        self, embedder: Any, query: str, embed: Callable[[], list[float]]
    ) -> list[float]:
        """The cached vector of ``query`` for ``embedder``, else ``embed()``'s, remembered."""
        key = (id(embedder), query)
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now - entry[2] < self.ttl:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[1]
            self.misses += 1
        vector = embed()
        with self._lock:
            self._entries[key] = (embedder, vector, now)
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
