"""Bounded retries with exponential backoff and jitter, shared by the HTTP providers.

A provider wraps one request in a function that raises :class:`Transient` for what is worth
retrying (429, 5xx, connection trouble) and :class:`EmbeddingError` for what is not (401, 400);
:func:`call_with_retry` does the waiting. The sleep and the random source are injectable so that
tests can assert the waits without waiting.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from knowledge_assets.core.embedders.base import EmbeddingError

T = TypeVar("T")

# Statuses a server uses for "not now": rate limiting and server-side trouble.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})


def is_retryable_status(status: int | None) -> bool:
    """Whether an HTTP status means "try again later" rather than "this request is wrong"."""
    return status is not None and (status in RETRYABLE_STATUSES or status >= 500)


class Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    ``max_retries`` retries follow the first attempt. The n-th wait is drawn from
    [d/2, d] with d = min(max_backoff, base_delay * 2**n) ("equal jitter": spread out so that
    parallel clients do not retry in lockstep, yet never shorter than half the backoff). A
    ``Retry-After`` from the server replaces the drawn wait, capped at ``max_retry_after`` so that
    a misbehaving server cannot park a run for hours.
    """

    max_retries: int = 5
    base_delay: float = 1.0
    max_backoff: float = 30.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    rand: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        ceiling = min(self.max_backoff, self.base_delay * (2**retry))
        return ceiling / 2 + self.rand() * ceiling / 2


def call_with_retry(fn: Callable[[], T], policy: RetryPolicy, what: str) -> T:
    """``fn()``, retried on :class:`Transient` per ``policy``; EmbeddingError once exhausted."""
    retry = 0
    while True:
        try:
            return fn()
        except Transient as exc:
            if retry >= policy.max_retries:
                status = f"HTTP {exc.status}: " if exc.status is not None else ""
                raise EmbeddingError(
                    f"{what} failed after {retry + 1} attempts ({status}{exc})"
                ) from exc
            policy.sleep(policy.delay(retry, exc.retry_after))
            retry += 1


def parse_retry_after(headers: Mapping[str, Any] | None) -> float | None:
    """The ``Retry-After`` header in seconds (delta-seconds or an HTTP date), if usable."""
    if not headers:
        return None
    value = headers.get("Retry-After") or headers.get("retry-after")
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_policy(
    retry: RetryPolicy | None = None,
    *,
    max_retries: int | None = None,
    max_backoff: float | None = None,
    sleep: Callable[[float], None] | None = None,
) -> RetryPolicy:
    """``retry`` (or the default policy) with the individually given settings applied."""
    policy = retry or RetryPolicy()
    changes: dict[str, Any] = {}
    if max_retries is not None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        changes["max_retries"] = max_retries
    if max_backoff is not None:
        changes["max_backoff"] = max_backoff
    if sleep is not None:
        changes["sleep"] = sleep
    if not changes:
        return policy
    return replace(policy, **changes)
