"""Progress of long work (files read, notes chunked, passages embedded), with rate and ETA.

Core functions take a :class:`Progress` and call ``advance``; what people see is up to the
caller: the assets write a line to the run log every few seconds, ``demo`` draws a terminal
progress bar. Listeners registered with :func:`subscribe` see every update of every stage in
this process, which is how the terminal bar follows a run executing in the same process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Update:
    """One stage's state: ``done`` of ``total`` units (``unit``: files, notes, passages)."""

    stage: str
    unit: str
    done: int
    total: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Units per second so far."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far, None before the first unit."""
        return (self.total - self.done) / self.rate if self.rate > 0 else None

    def line(self) -> str:
        """``chunks: 4,200/10,000 notes (42%), 350 notes/s, about 17 s left``."""
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        eta = self.eta
        left = "" if eta is None or self.done >= self.total else f", about {_duration(eta)} left"
        return (
            f"{self.stage}: {self.done:,}/{self.total:,} {self.unit}{pct},"
            f" {self.rate:,.0f} {self.unit}/s{left}"
        )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


Listener = Callable[[Update], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def subscribe(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` on every update in this process; returns the function that stops it."""
    with _lock:
        _listeners.append(listener)

    def unsubscribe() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unsubscribe


@dataclass
class Progress:
    """Counts one stage and reports it: to ``log`` (a line every ``every`` seconds, and at the
    end) and to every subscribed listener (each update)."""

    stage: str
    unit: str
    total: int = 0
    log: Callable[[str], None] | None = None
    every: float = 5.0
    done: int = 0
    _started: float = field(default_factory=time.perf_counter)
    _logged: float = field(default_factory=time.perf_counter)

    def start(self, total: int, *, since: float | None = None) -> None:
        """Begin (or restart the clock) with ``total`` units to go. ``since``: the
        ``time.perf_counter()`` at which the work began, when that was before this call (the
        rate counts from then)."""
        self.total, self.done = total, 0
        self._started = self._logged = time.perf_counter()
        if since is not None:
            self._started = min(since, self._started)
        self._emit(force=False)

    def advance(self, n: int = 1) -> None:
        """``n`` more units are done."""
        self.done += n
        self._emit(force=self.done >= self.total)

    def stage_after(self, stage: str, unit: str) -> Progress:
        """The progress of a stage that follows this one, reported to the same log at the same
        pace (an index build that ends a step)."""
        return Progress(stage, unit, log=self.log, every=self.every)

    def update(self) -> Update:
        return Update(self.stage, self.unit, self.done, self.total,
                      time.perf_counter() - self._started)  # fmt: skip

    def _emit(self, *, force: bool) -> None:
        state = self.update()
        with _lock:
            listeners = list(_listeners)
        for listener in listeners:
            listener(state)
        now = time.perf_counter()
        if self.log is not None and self.total and (force or now - self._logged >= self.every):
            self._logged = now
            self.log(state.line())


def quiet(stage: str, unit: str) -> Progress:
    """A progress that only listeners see (no log lines)."""
    return Progress(stage, unit)
