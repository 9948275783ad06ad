"""The answering LLM: Anthropic Messages (``anthropic`` SDK) or OpenAI-compatible Chat
Completions (``openai`` SDK), streamed, with bounded retries and a timeout.

The SDKs' own retries are switched off: they honour any ``Retry-After``, however long, so one
slow server could park a question for hours. Here 429, 408/409 and 5xx answers and connection
failures are retried ``max_retries`` times, waiting the server's ``Retry-After`` capped at
``max_retry_after_s`` (else exponential backoff with jitter). Only opening the stream is
retried: once text has reached the user, a broken stream is an error, not a silent restart. A
stream that ends without the provider's end event (Anthropic's ``message_stop``, a
``finish_reason`` in OpenAI's chunks) broke off too: the connection closed cleanly, but the
answer is not whole. Error messages name the provider and the status, never the key.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from knowledge_assets.answer.config import LLMSettings
from knowledge_assets.core import secrets
from knowledge_assets.core.embedders.retry import (
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
)


class LLMError(RuntimeError):
    """The LLM could not answer (after the retries); the message says why, without secrets."""


def _http_errors() -> tuple[type[Exception], ...]:
    """The HTTP libraries' own errors, which the SDKs let through when a stream breaks after it
    opened (``anthropic`` reads with ``httpx2``, ``openai`` with ``httpx``)."""
    found: list[type[Exception]] = []
    for name in ("httpx", "httpx2"):
        try:
            found.append(importlib.import_module(name).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


_HTTP_ERRORS = _http_errors()


def length_field(base_url: str | None) -> str:
    """The Chat Completions field that caps the answer's length at ``base_url``.

    OpenAI's own API (and Azure's) takes ``max_completion_tokens`` for every chat model and
    refuses ``max_tokens`` for its reasoning models (o-series, gpt-5): HTTP 400. The servers
    that speak the same protocol (Ollama, vLLM, OpenRouter, LM Studio) read ``max_tokens``, and
    some know no other.
    """
    host = (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"
    openai = host == "api.openai.com" or host.endswith(".openai.azure.com")
    return "max_completion_tokens" if openai else "max_tokens"


@dataclass
class Usage:
    """Tokens the provider reported for one answer."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class LLMClient:
    """One provider client; ``stream`` yields the answer's text pieces and fills ``usage``."""

    settings: LLMSettings
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    # Whether the last answer stopped at the length limit (KA_LLM_MAX_TOKENS), not at its end.
    cut_short: bool = False

    def __post_init__(self) -> None:
        s = self.settings
        kwargs: dict[str, Any] = {"api_key": s.api_key, "timeout": s.timeout_s, "max_retries": 0}
        if s.base_url:
            kwargs["base_url"] = s.base_url
        if s.provider == "anthropic":
            import anthropic

            self._sdk: Any = anthropic
            self._client: Any = anthropic.Anthropic(**kwargs)
        elif s.provider == "openai":
            import openai

            self._sdk = openai
            self._client = openai.OpenAI(**kwargs)
        else:
            raise ValueError(f"no LLM client for provider {s.provider!r}")

    def stream(self, system: str, messages: list[dict[str, str]]) -> Iterator[str]:
        """The model's reply to ``messages`` under ``system``, piece by piece."""
        self.usage, self.cut_short = Usage(), False
        events = self._open(system, messages)
        self._check_stream(events)
        try:
            if self.settings.provider == "anthropic":
                finished = yield from self._anthropic_text(events)
            else:
                finished = yield from self._openai_text(events)
        except (self._sdk.APIConnectionError, *_HTTP_ERRORS) as exc:
            raise LLMError(self._broke_off(type(exc).__name__)) from None
        except self._sdk.APIError as exc:  # the provider's error event, after its 200
            raise LLMError(self._broke_off(self._event_error(exc))) from None
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
        if not finished:
            raise LLMError(self._broke_off("the connection closed before the end of the answer"))

    def _check_stream(self, events: Any) -> None:
        """Refuse a 200 that is no event stream: a wrong KA_LLM_BASE_URL (a web page, a proxy's
        login) gave no event, and was reported as an answer that broke off, "ask again"."""
        response = getattr(events, "response", None)
        kind = str(getattr(response, "headers", {}).get("content-type", "")).split(";")[0]
        if not kind or kind.strip() == "text/event-stream":
            return
        close = getattr(events, "close", None)
        if close is not None:
            close()
        s = self.settings
        where = s.base_url or f"the {s.provider} API"
        raise LLMError(
            f"{s.provider} model {s.model}: {where} answered with {kind.strip()}, not the model's"
            " answer stream: check KA_LLM_BASE_URL (an OpenAI-compatible server's address ends"
            " in /v1)"
        )

    def complete(self, system: str, messages: list[dict[str, str]]) -> str:
        """The whole reply as one string."""
        return "".join(self.stream(system, messages))

    def _open(self, system: str, messages: list[dict[str, str]]) -> Any:
        policy = RetryPolicy(
            max_retries=self.settings.max_retries, base_delay=0.5, max_backoff=8.0,
            max_retry_after=self.settings.max_retry_after_s, sleep=self.sleep,
        )  # fmt: skip
        self.attempts = 0
        while True:
            self.attempts += 1
            try:
                return self._request(system, messages)
            except self._sdk.APIError as exc:
                status = getattr(exc, "status_code", None)
                transient = isinstance(exc, self._sdk.APIConnectionError) or is_retryable_status(status)  # fmt: skip
                if not transient or self.attempts > policy.max_retries:
                    raise LLMError(self._describe(exc, self.attempts)) from None
                headers = getattr(getattr(exc, "response", None), "headers", None)
                policy.sleep(policy.delay(self.attempts - 1, parse_retry_after(headers)))

    def _request(self, system: str, messages: list[dict[str, str]]) -> Any:
        s = self.settings
        if s.provider == "anthropic":
            return self._client.messages.create(
                model=s.model, max_tokens=s.max_output_tokens, system=system,
                messages=messages, stream=True,
            )  # fmt: skip
        return self._client.chat.completions.create(
            model=s.model, stream=True, **{length_field(s.base_url): s.max_output_tokens},
            messages=[{"role": "system", "content": system}, *messages],
            stream_options={"include_usage": True},
        )  # fmt: skip

    def _anthropic_text(self, events: Any) -> Generator[str, None, bool]:
        """The text pieces; returns whether the message's end event arrived."""
        for event in events:
            kind = getattr(event, "type", "")
            if kind == "message_stop":
                return True
            if kind == "message_start":
                self.usage.input_tokens = int(event.message.usage.input_tokens or 0)
            elif kind == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                yield event.delta.text
            elif kind == "message_delta":
                if getattr(event, "usage", None) is not None:
                    self.usage.output_tokens = int(event.usage.output_tokens or 0)
                stop = getattr(getattr(event, "delta", None), "stop_reason", None)
                self.cut_short = self.cut_short or stop == "max_tokens"
        return False

    def _openai_text(self, chunks: Any) -> Generator[str, None, bool]:
        """The text pieces; returns whether a choice said why it finished (the usage chunk, when
        asked for, comes after it)."""
        finished = False
        for chunk in chunks:
            if getattr(chunk, "usage", None) is not None:
                self.usage.input_tokens = int(chunk.usage.prompt_tokens or 0)
                self.usage.output_tokens = int(chunk.usage.completion_tokens or 0)
            for choice in chunk.choices or ():
                text = getattr(choice.delta, "content", None)
                if text:
                    yield text
                reason = getattr(choice, "finish_reason", None)
                finished = finished or reason is not None
                self.cut_short = self.cut_short or reason == "length"
        return finished

    def _event_error(self, exc: Exception) -> str:
        """What an error event in the stream says: its type and message (Anthropic wraps them
        in ``error``, OpenAI sends them bare), without the key."""
        body = getattr(exc, "body", None)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body = body["error"]
        if isinstance(body, dict):
            text = ": ".join(str(body[k]) for k in ("type", "message") if body.get(k))
        else:
            text = str(getattr(exc, "message", "") or "")
        return self._shown(text) or type(exc).__name__

    def _shown(self, text: str) -> str:
        """The first line of a provider's message, at most 200 characters, the key and any
        credential-shaped value masked."""
        # Masked before it is cut: a key cut in two matches neither its value nor its shape.
        text = secrets.redact(text, extra=[self.settings.api_key])
        return (text.strip().splitlines() or [""])[0][:200]

    def _broke_off(self, reason: str) -> str:
        s = self.settings
        return (
            f"{s.provider} model {s.model}: the answer broke off before the model finished"
            f" ({reason}); what was shown is incomplete: ask again"
        )

    def _describe(self, exc: Exception, attempts: int = 1) -> str:
        s = self.settings
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status else type(exc).__name__
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        detail = self._shown(str(getattr(exc, "message", "") or ""))
        hint = " (check the API key)" if status in (401, 403) else ""
        return f"{s.provider} model {s.model} failed{tries}: {what}{hint}" + (
            f": {detail}" if detail else ""
        )
