"""One GitHub repository over REST through PyGithub, as :class:`GitHubSource` talks to it.

Requests are retried on 5xx, rate limits and network errors with bounded backoff (PyGithub's
own retrying is off, so the two do not multiply); ``Retry-After`` and ``X-RateLimit-Reset`` are
honoured up to the same bound. The token never appears in a message, nor in an exception
chained to one. What to ask for and what the answers mean for a sync is
:mod:`knowledge_assets.core.sources.github`'s business.
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import github
import requests
from github.Repository import Repository

from knowledge_assets.core import secrets
from knowledge_assets.core.sources.base import SourceError, UnreadableFile

T = TypeVar("T")

Entry = tuple[str, str, str, str]  # path, type, mode, sha of one git tree entry


class HTTPError(SourceError):
    """An answer that retrying cannot fix (404, 403 forbidden, 422, ...)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# A connection dropped in the middle of an answer: as transient as one that never opened.
_DROPPED = (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)


class GitHubAPI:
    """Requests to repository ``repo`` (``owner/name``), each retried at most ``max_retries``
    times with waits of at most ``max_backoff_s``."""

    backoff_base_s = 1.0

    def __init__(
        self,
        repo: str,
        token: str | None,
        base_url: str,
        max_retries: int,
        max_backoff_s: float,
        timeout_s: float,
        sleep: Callable[[float], None],
    ) -> None:
        self.repo = repo
        self.base_url = base_url
        self.max_retries = max(0, max_retries)
        self.max_backoff_s = max(0.0, max_backoff_s)
        self.timeout_s = timeout_s
        self.sleep = sleep
        self._token = token
        secrets.register(token)
        self._repo: Repository | None = None

    def repository(self) -> Repository:
        """The PyGithub repository object, created on first use; ``lazy`` spares a request."""
        if self._repo is None:
            client = github.Github(
                auth=github.Auth.Token(self._token) if self._token else None,
                base_url=self.base_url,
                timeout=max(1, math.ceil(self.timeout_s)),
                retry=None,  # retried here instead, where the backoff is bounded
                seconds_between_requests=None,
                seconds_between_writes=None,
                lazy=True,
            )
            self._repo = client.get_repo(self.repo)
        return self._repo

    def follow(self, canonical: str | None) -> None:
        """Address the repository by ``canonical``, the name GitHub answers for it now, when it
        differs from the configured one (a renamed repository). Its old name still answers,
        with redirects that PyGithub follows without their query: a recursive tree came back as
        the root folder's listing, and every note in a folder counted as deleted."""
        if canonical and canonical.lower() != self.repo.lower() and "/" in canonical:
            self.repo = canonical
            self._repo = None

    def call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one request, retrying transient failures at most ``max_retries`` times.

        A server that echoes the token in an error body must not put it in our error, nor in
        the PyGithub exception chained to it: such errors leave scrubbed, with no chain."""
        return secrets.call_contained(lambda: self._retrying(what, fn), [self._token])

    def found(self, what: str, fn: Callable[[], T], missing: tuple[int, ...] = (404,)) -> T | None:
        """Like ``call``, but None when GitHub answers one of the ``missing`` statuses."""
        try:
            return self.call(what, fn)
        except HTTPError as exc:
            if exc.status in missing:
                return None
            raise

    def tree(self, what: str, sha: str, recursive: bool) -> tuple[bool, list[Entry]]:
        """One git-trees answer: whether GitHub truncated it, and its entries."""
        return self.call(what, partial(_listing, self.repository(), sha, recursive))

    def blob(self, sha: str, path: str) -> bytes:
        """The bytes of the git blob ``sha`` (the note at ``path``)."""
        repo = self.repository()

        def fetch() -> tuple[str, str]:
            blob = repo.get_git_blob(sha)
            return blob.encoding, blob.content

        return decode(*self.call(f"blob of {path}", fetch), path)

    def _retrying(self, what: str, fn: Callable[[], T]) -> T:
        problem = ""
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except github.GithubException as exc:
                delay, problem = self._judge(what, exc, attempt)
            except (requests.ConnectionError, requests.Timeout, *_DROPPED) as exc:
                delay = self._backoff(attempt)
                problem = f"cannot reach {self.base_url} ({type(exc).__name__})"
            except (AttributeError, TypeError, ValueError) as exc:
                # PyGithub reading an answer that is not the API's (a proxy's or portal's page
                # with status 200): no retry helps, and the sensor would have raised it.
                raise SourceError(
                    f"GitHub {what} of {self.repo}: {self.base_url} answered with something"
                    f" that is not GitHub's API ({type(exc).__name__}): check KA_GITHUB_BASE_URL,"
                    " or a proxy in between"
                ) from None
            if attempt < self.max_retries:
                self.sleep(delay)
        attempts = self.max_retries + 1
        raise SourceError(f"GitHub {what} of {self.repo} failed {attempts} times: {problem}")

    def _judge(self, what: str, exc: github.GithubException, attempt: int) -> tuple[float, str]:
        """The wait before retrying ``exc`` and a description, or raise if retrying is futile."""
        status = exc.status
        headers = {key.lower(): value for key, value in (exc.headers or {}).items()}
        message = exc.data.get("message", "") if isinstance(exc.data, dict) else ""
        if status == 401:
            raise SourceError(self._unauthorised_message()) from exc
        hinted = "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"
        limited = isinstance(exc, github.RateLimitExceededException) or hinted
        if status == 429 or (status == 403 and limited):
            return self._rate_limit_wait(headers, attempt), f"rate limited ({status} {message})"
        if status >= 500:
            return self._backoff(attempt), f"HTTP {status} {message}".strip()
        raise HTTPError(status, f"GitHub {what} of {self.repo}: HTTP {status} {message}") from exc

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff_base_s * 2**attempt, self.max_backoff_s)

    def _rate_limit_wait(self, headers: Mapping[str, Any], attempt: int) -> float:
        """Honour ``Retry-After`` or ``X-RateLimit-Reset``, but wait at most ``max_backoff_s``."""
        try:
            if "retry-after" in headers:
                wait = float(headers["retry-after"])
            elif "x-ratelimit-reset" in headers:
                wait = float(headers["x-ratelimit-reset"]) - time.time() + 1
            else:
                wait = self._backoff(attempt)
        except ValueError:
            wait = self._backoff(attempt)
        return min(max(wait, 0.0), self.max_backoff_s)

    def _unauthorised_message(self) -> str:
        if self._token:
            return "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN"
        return f"GitHub requires a token for {self.repo} (401 Bad credentials): set GITHUB_TOKEN"


def _listing(repo: Repository, sha: str, recursive: bool) -> tuple[bool, list[Entry]]:
    tree = repo.get_git_tree(sha, recursive=recursive)
    entries = [(e.path, e.type, e.mode, e.sha) for e in tree.tree]
    return bool(tree.raw_data.get("truncated")), entries


def decode(encoding: str | None, content: str | None, path: str) -> bytes:
    """A file's bytes from GitHub's ``encoding`` and ``content``; an encoding we cannot read
    makes the file :class:`UnreadableFile`."""
    if encoding == "base64":
        return base64.b64decode(content or "")
    if encoding in ("utf-8", "utf8"):
        return (content or "").encode()
    raise UnreadableFile(f"GitHub sent the file in an unknown encoding {encoding!r}")
