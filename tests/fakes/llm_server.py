"""A loopback LLM server speaking Anthropic's Messages and OpenAI's Chat Completions wire formats.

Routes (``server.url`` is ``http://127.0.0.1:<port>``):

- ``POST /v1/messages`` — **Anthropic** (``anthropic.Anthropic(base_url=server.anthropic_base_url)``).
  Checks the key (``x-api-key`` or a bearer token) and ``anthropic-version``; answers a JSON message, or with ``stream: true``
  the server-sent events ``message_start``, ``content_block_start``, ``content_block_delta``
  (``text_delta``), ``content_block_stop``, ``message_delta`` (usage) and ``message_stop``.
  Errors are ``{"type": "error", "error": {"type", "message"}}``.
- ``POST /v1/chat/completions`` — **OpenAI** (``openai.OpenAI(base_url=server.openai_base_url)``).
  Checks ``Authorization: Bearer``; answers a ``chat.completion``, or with ``stream: true``
  ``chat.completion.chunk`` events ending in a usage chunk (when ``stream_options.include_usage``)
  and ``data: [DONE]``. Errors are ``{"error": {"message", "type", "code"}}``.

The reply text comes from :meth:`FakeLLMServer.reply` (queued texts, served in order) or, when
none is queued, from :func:`default_reply`: JSON in seed 001's format citing the first note of
the prompt's context. :meth:`FakeLLMServer.fail` queues faults (429 with ``Retry-After``, 500)
served before any answer; :meth:`FakeLLMServer.cut` makes the next streamed answer stop after a
few pieces, its connection closed cleanly (no end event), broken mid-body, or after the
provider's error event (an overload). With ``pace_s`` a streamed answer sends one piece per
``pace_s`` seconds, and a client that goes away meanwhile is recorded in ``abandoned`` (the
events it had been sent). Every request is logged with its headers and body.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK_CHARS = 7  # stream the reply in pieces this long, as real servers do


@dataclass
class Logged:
    """One request as the server saw it."""

    path: str
    status: int
    headers: dict[str, str]
    body: dict[str, Any] = field(repr=False)


def default_reply(prompt: str) -> str:
    """Seed 001's JSON answer citing the prompt's first note and quoting its first line of text."""
    note_id = re.search(r"^noteId: (.+)$", prompt, re.MULTILINE)
    title = re.search(r"^## \[1\] (.+)$", prompt, re.MULTILINE)
    body = re.search(r"^### .+\n(.+)$", prompt, re.MULTILINE)
    if not note_id:
        return json.dumps({"answer": "情報が見つかりませんでした", "sources": [], "confidence": "low"}, ensure_ascii=False)  # fmt: skip
    answer = f"{title.group(1) if title else ''}によると、{body.group(1) if body else ''}"
    source = {
        "noteId": note_id.group(1),
        "noteTitle": title.group(1) if title else "",
        "relevance": "高",
    }
    return json.dumps({"answer": answer, "sources": [source], "confidence": "high"}, ensure_ascii=False)  # fmt: skip


class FakeLLMServer:
    """Both wire formats on one loopback port; use as a context manager."""

    def __init__(
        self, api_key: str = "sk-test-secret", delay_s: float = 0.0, pace_s: float = 0.0
    ) -> None:
        self.api_key = api_key
        self.delay_s = delay_s
        self.pace_s = pace_s
        self.log: list[Logged] = []
        self.abandoned: list[int] = []  # per stream the client left: events sent
        # A refused key is echoed after this many characters of padding (a proxy that quotes
        # the request it refused); None: the message names no key.
        self.echo_key_at: int | None = None
        # A web page answered to every request (a wrong base URL: a proxy's login, a router).
        self.page: str | None = None
        self._replies: deque[str] = deque()
        self._faults: deque[tuple[int, str | None]] = deque()
        self._cuts: deque[tuple[int, str]] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    anthropic_base_url = url
    openai_base_url = property(lambda self: self.url + "/v1")

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply(self, *texts: str) -> None:
        """Queue the model's next replies (raw text: JSON, broken JSON or prose)."""
        with self._lock:
            self._replies.extend(texts)

    def fail(self, status: int, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` (and ``Retry-After``)."""
        with self._lock:
            self._faults.extend([(status, retry_after)] * times)

    def cut(self, after: int, how: str = "closed") -> None:
        """Stop the next streamed answer after ``after`` text pieces: the connection closes
        without the provider's end event, ``closed`` cleanly, ``broken`` in the middle of a body
        whose announced length never arrives (a proxy or the provider dropping it), or after
        the provider's ``error`` event saying it is overloaded."""
        with self._lock:
            self._cuts.append((after, how))

    def _cut(self) -> tuple[int, str] | None:
        with self._lock:
            return self._cuts.popleft() if self._cuts else None

    def _next(self, prompt: str) -> tuple[int, str | None, str]:
        with self._lock:
            if self._faults:
                status, retry_after = self._faults.popleft()
                return status, retry_after, ""
            return 200, None, self._replies.popleft() if self._replies else default_reply(prompt)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if fake.page is not None:
                    return self._page(fake.page)
                flavor = "anthropic" if self.path == "/v1/messages" else "openai" if self.path == "/v1/chat/completions" else None  # fmt: skip
                if flavor is None:
                    return self._error(404, None, "openai", "not found")
                if not fake._authorized(flavor, self.headers):
                    refused = "invalid x-api-key" if flavor == "anthropic" else "Incorrect API key provided"  # fmt: skip
                    if fake.echo_key_at is not None:
                        sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                        refused = refused[: fake.echo_key_at].ljust(fake.echo_key_at, ".") + sent
                    return self._error(401, None, flavor, refused)
                status, retry_after, text = fake._next(_prompt(body))
                fake.log.append(Logged(self.path, status, dict(self.headers), body))
                if status != 200:
                    return self._error(status, retry_after, flavor, "rate limited" if status == 429 else "server error")  # fmt: skip
                if fake.delay_s:
                    time.sleep(fake.delay_s)
                stream = bool(body.get("stream"))
                usage = (len(_prompt(body)) // 3, max(1, len(text) // 3))
                if flavor == "anthropic":
                    events = _anthropic_events(body, text, usage) if stream else None
                    payload = _anthropic_message(body, text, usage)
                else:
                    events = _openai_events(body, text, usage) if stream else None
                    payload = _openai_completion(body, text, usage)
                self._send(events, payload)

            def _send(self, events: list[tuple[str | None, dict[str, Any] | str]] | None, payload: dict[str, Any]) -> None:  # fmt: skip
                if events is None:
                    data = json.dumps(payload, ensure_ascii=False).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                cut = fake._cut()
                if cut is not None:  # the start events, then ``after`` text pieces
                    anthropic = events[0][0] == "message_start"
                    events = events[: 2 + cut[0]] if anthropic else events[: 1 + cut[0]]
                    if cut[1] == "error":
                        events.append(_stream_error(anthropic))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                if cut is not None and cut[1] == "broken":  # a body promised longer than sent
                    self.send_header("Content-Length", "1000000")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                sent = 0
                for name, data in events:
                    line = (f"event: {name}\n" if name else "") + "data: " + (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)) + "\n\n"  # fmt: skip
                    try:
                        self.wfile.write(line.encode())
                        self.wfile.flush()
                    except OSError:  # the client closed the connection
                        fake.abandoned.append(sent)
                        return
                    sent += 1
                    if fake.pace_s:
                        time.sleep(fake.pace_s)

            def _page(self, html: str) -> None:
                data = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(
                self, status: int, retry_after: str | None, flavor: str, message: str
            ) -> None:
                if flavor == "anthropic":
                    kind = {401: "authentication_error", 429: "rate_limit_error"}.get(
                        status, "api_error"
                    )
                    payload: dict[str, Any] = {
                        "type": "error",
                        "error": {"type": kind, "message": message},
                    }
                else:
                    payload = {"error": {"message": message, "type": "error", "code": str(status)}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _authorized(self, flavor: str, headers: Any) -> bool:
        bearer = headers.get("Authorization") == f"Bearer {self.api_key}"
        if flavor == "anthropic":  # the SDK sends a bearer token; curl examples use x-api-key
            key = bearer or headers.get("x-api-key") == self.api_key
            return key and bool(headers.get("anthropic-version"))
        return bearer


def _stream_error(anthropic: bool) -> tuple[str | None, dict[str, Any]]:
    """The event each provider sends when it gives up in the middle of a streamed answer."""
    if anthropic:
        return ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})  # fmt: skip
    return (None, {"error": {"message": "Overloaded", "type": "server_error", "code": None}})


def _prompt(body: dict[str, Any]) -> str:
    """The last user message's text."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


def _pieces(text: str) -> list[str]:
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]


def _anthropic_message(body: dict[str, Any], text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }  # fmt: skip


def _limited(body: dict[str, Any], text: str) -> tuple[str, bool]:
    """The reply cut at the request's length limit, as a model stops there (3 characters a
    token, as this server counts usage), and whether it was cut."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if limit is None or len(text) <= 3 * int(limit):
        return text, False
    return text[: 3 * int(limit)], True


def _anthropic_events(body: dict[str, Any], text: str, usage: tuple[int, int]) -> list[tuple[str | None, dict[str, Any] | str]]:  # fmt: skip
    text, cut = _limited(body, text)
    start = _anthropic_message(body, "", (usage[0], 1))
    start["content"], start["stop_reason"] = [], None
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ]  # fmt: skip
    for piece in _pieces(text):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}))  # fmt: skip
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens" if cut else "end_turn", "stop_sequence": None}, "usage": {"output_tokens": usage[1]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


def _openai_completion(body: dict[str, Any], text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }  # fmt: skip


def _openai_events(body: dict[str, Any], text: str, usage: tuple[int, int]) -> list[tuple[str | None, dict[str, Any] | str]]:  # fmt: skip
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model"), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip

    text, cut = _limited(body, text)
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        (None, chunk({"role": "assistant", "content": ""}))
    ]
    events += [(None, chunk({"content": piece})) for piece in _pieces(text)]
    events.append((None, chunk({}, "length" if cut else "stop")))
    if (body.get("stream_options") or {}).get("include_usage"):
        final = chunk({})
        final["choices"] = []
        final["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        }
        events.append((None, final))
    events.append((None, "[DONE]"))
    return events
