"""Keep API keys and tokens out of every message, log line, traceback and Dagster event.

Servers sometimes echo the key they were sent (in an error body, or the whole ``Authorization``
header), and client libraries put those bodies into their exception messages. Redacting the new
message is not enough: Python and Dagster print the whole ``__cause__``/``__context__`` chain.
So anything that crosses from a client library into our code goes through :func:`call_contained`,
which replaces an exception whose chain mentions a secret by a clean one with no chain at all.

Secrets are recognised by value (the environment variables in :data:`SECRET_ENV`, the password of
each address in :data:`URL_ENV` and any key handed to :func:`register`) and by shape (``Bearer …`` credentials,
``api_key=…``-style assignments), so a key that never passed through the environment is caught too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

SECRET_ENV = (
    "VOYAGE_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "KA_EMBED_API_KEY",
    "KA_LLM_API_KEY",
    "KA_API_TOKEN",
)
# Addresses that may carry a password (postgresql://user:password@host, https://user:pw@host):
# libpq and HTTP clients quote a URL they cannot parse whole in their errors.
URL_ENV = (
    "DATABASE_URL",
    "KA_READER_URL",
    "KA_QA_WRITER_URL",
    "KA_EMBED_BASE_URL",
    "KA_LLM_BASE_URL",
    "KA_GITHUB_BASE_URL",
)
MASK = "***"
# Shorter values are too likely to occur in ordinary text ("test", "1234") to be masked safely.
MIN_SECRET_CHARS = 6
_registered: set[str] = set()
_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    # An Authorization header value: "Bearer sk-…", "Basic …".
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}"), rf"\1\2{MASK}"),
    # GitHub's "token ghp_…" scheme; only a long value with a digit, so "token limit" stays.
    (re.compile(r"(?i)\b(token)(\s+)(?=[\w.~+/=-]*\d)[\w.~+/=-]{16,}"), rf"\1\2{MASK}"),
    # key=value / "key": "value" for the usual secret-bearing names.
    (
        re.compile(
            r"(?i)([\"']?(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|password|secret"
            r"|authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}]{6,})"
        ),
        rf"\1{MASK}",
    ),
    # Well-known key formats: OpenAI/Anthropic "sk-…", Voyage "pa-…", GitHub "ghp_…"/"github_pat_…".
    (
        re.compile(r"\b(?:sk|pa)-[\w-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_\w{20,}"),
        MASK,
    ),
)


def register(secret: str | None) -> None:
    """Remember ``secret`` (a key given in code rather than in the environment) for redaction."""
    if secret and len(secret) >= MIN_SECRET_CHARS:
        _registered.add(secret)


def known_secrets() -> list[str]:
    """Every secret value this process knows of, longest first (so no part of one survives)."""
    values = set(_registered)
    values.update(os.environ[name] for name in SECRET_ENV if os.environ.get(name))
    values.update(p for name in URL_ENV if (p := url_password(os.environ.get(name))))
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


def url_password(url: str | None) -> str | None:
    """The password in a database URL or connection string, or in an HTTP address, if any."""
    if not url:
        return None
    try:
        import psycopg

        return psycopg.conninfo.conninfo_to_dict(url).get("password") or None  # type: ignore[return-value]
    except Exception:  # unparsable: the password of scheme://user:password@host, if it has one
        found = _URL_PASSWORD.match(url)
        return found.group(1) if found else None


# The password of a URL libpq cannot parse (its error quotes the URL whole), with or without its
# scheme (``user:password@host`` is a common slip): from the first colon after the user name to
# the last "@".
_URL_PASSWORD = re.compile(r"^(?:[A-Za-z][\w+.-]*://)?[^:/@]*:(.+)@[^@]*$", re.DOTALL)


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret (and ``extra`` ones) and every credential-shaped value
    masked."""
    for secret in [*(s for s in extra if s and len(s) >= MIN_SECRET_CHARS), *known_secrets()]:
        text = text.replace(secret, MASK)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception chained to it (cause and context), each once."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend((item.__cause__, item.__context__))


def _texts(exc: BaseException) -> Iterator[str]:
    yield str(exc)
    yield repr(exc.args)
    for note in getattr(exc, "__notes__", None) or ():
        yield str(note)


def leaks(exc: BaseException, extra: Iterable[str | None] = ()) -> bool:
    """Whether ``exc`` or anything chained to it shows a secret (by value or by shape)."""
    extra = list(extra)
    return any(redact(text, extra) != text for e in _chain(exc) for text in _texts(e))


def scrubbed(exc: BaseException, extra: Iterable[str | None] = ()) -> BaseException:
    """``exc`` itself when nothing in its chain shows a secret; otherwise a new exception with the
    redacted message and no chain: a copy of ``exc`` for this package's own exception types
    (their extra fields, such as an HTTP status, are ours and hold no secret), else one of the
    same type built from the message, else a RuntimeError naming the type."""
    extra = list(extra)
    if not leaks(exc, extra):
        return exc
    message = redact(str(exc), extra) or type(exc).__name__
    clean: BaseException | None = None
    try:
        if type(exc).__module__.startswith("knowledge_assets."):
            # Made without calling ``__init__``, whose arguments need not be the message alone
            # (an HTTP error takes its status first): a copy called it with ``args`` and failed,
            # and the error became a RuntimeError its handlers no longer caught. Notes are left
            # out: they are not redacted.
            clean = type(exc).__new__(type(exc), message)
            clean.__dict__.update({k: v for k, v in vars(exc).items() if k != "__notes__"})
            clean.args = (message,)
        else:
            clean = type(exc)(message)
        if str(clean) != message:  # a class that formats its message from other fields
            clean = None
    except Exception:
        clean = None
    if clean is None:
        clean = RuntimeError(f"{type(exc).__name__}: {message}")
    clean.__cause__ = None
    clean.__context__ = None
    clean.__suppress_context__ = True
    clean.__traceback__ = None
    return clean


def call_contained(fn: Callable[[], T], extra: Iterable[str | None] = ()) -> T:
    """``fn()``; an exception showing a secret is replaced by a scrubbed one that has neither
    ``__cause__`` nor ``__context__`` (raised outside the handler, so Python sets none)."""
    extra = list(extra)
    clean: BaseException | None = None
    try:
        return fn()
    except Exception as exc:
        clean = scrubbed(exc, extra)
        if clean is exc:
            raise
    raise clean
