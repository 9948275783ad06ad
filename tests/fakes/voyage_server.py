"""A loopback embeddings server speaking Voyage's and OpenAI's real wire formats.

Routes (``server.url`` is ``http://127.0.0.1:<port>``):

- ``POST /v1/embeddings`` — **Voyage** (what ``voyageai.Client(base_url=server.voyage_base_url)``
  posts to; voyageai 0.5.0 appends ``/embeddings`` to its base URL). Request
  ``{"input", "model", "input_type", "truncation", "output_dtype", "output_dimension",
  "encoding_format"}``; voyageai asks for ``encoding_format: "base64"`` (little-endian float32)
  unless told otherwise, and the fake honours it. Errors are ``{"detail": "..."}``, as the
  client's error mapping expects. Limits: 1,000 texts and the model's tokens per request.
- ``POST /openai/v1/embeddings`` — **OpenAI-compatible**. Same ``input``/``model`` fields, but
  there is no ``input_type`` (an unknown field is a 400, as at OpenAI), ``input`` may be a single
  string, ``dimensions`` replaces ``output_dimension``, errors are
  ``{"error": {"message", "type", "code"}}`` and usage has ``prompt_tokens``.

Both check ``Authorization: Bearer <api_key>``, log every request (:class:`Logged`) and answer
with deterministic unit vectors (:func:`fake_vector`). :meth:`FakeEmbeddingServer.fail` queues
faults (429 with ``Retry-After``, 500, 503, ...) served before normal answers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

VOYAGE_DIMS = {"voyage-3-lite": 512, "voyage-3": 1024, "voyage-3-large": 1024, "voyage-3.5": 1024}
VOYAGE_TOKENS_PER_REQUEST = {"voyage-3-lite": 1_000_000, "voyage-3": 320_000}
VOYAGE_MAX_TEXTS = 1000
FLEXIBLE_DIMS = {256, 512, 1024, 2048}
OPENAI_FIELDS = {"input", "model", "encoding_format", "dimensions", "user"}
ERROR_TEXT = {
    429: "You have exceeded your rate limit. Please wait and retry.",
    500: "Internal server error.",
    502: "Bad gateway.",
    503: "Service is temporarily unavailable.",
}


def fake_vector(text: str, dims: int) -> list[float]:
    """A unit vector seeded by the text's SHA-256: same text, same vector, in any process."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dims)
    return (vec / np.linalg.norm(vec)).astype(np.float32).tolist()


def count_tokens(text: str) -> int:
    """A tokenizer stand-in: 1 per non-ASCII character, 1 per 4 ASCII ones (at least 1)."""
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return max(1, len(text) - ascii_chars + (ascii_chars + 3) // 4)


@dataclass
class Fault:
    """One queued failure: an HTTP status, optionally with a ``Retry-After`` header value."""

    status: int
    retry_after: str | None = None


@dataclass
class Logged:
    """One request as the server saw it."""

    flavor: str  # "voyage" | "openai"
    path: str
    status: int
    n_texts: int
    tokens: int
    model: str | None
    input_type: str | None
    body: dict[str, Any] = field(repr=False)


class FakeEmbeddingServer:
    """A threaded HTTP server on 127.0.0.1 (random port); use as a context manager."""

    def __init__(
        self,
        api_key: str = "test-key-123",
        *,
        openai_dims: int = 384,
        max_tokens_per_request: int | None = None,
        echo_auth: bool = False,
        nan_vectors: bool = False,
        delay_s: float = 0.0,
        required_headers: dict[str, str] | None = None,
    ) -> None:
        self.api_key = api_key
        # An access proxy in front (Cloudflare Access): a request without these headers gets
        # its 403, whose body quotes the header values it was sent.
        self.required_headers = dict(required_headers or {})
        # Misbehaviour on request: error bodies that quote the Authorization header, vectors
        # with NaN components, a fixed delay before every answer (for timeouts).
        self.echo_auth = echo_auth
        self.nan_vectors = nan_vectors
        self.delay_s = delay_s
        self.openai_dims = openai_dims
        self.max_tokens_per_request = max_tokens_per_request  # overrides the per-model limit
        self.faults: deque[Fault] = deque()
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def voyage_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/openai/v1"

    def fail(self, status: int, *, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` instead of vectors."""
        with self._lock:
            self.faults.extend(Fault(status, retry_after) for _ in range(times))

    def ok_requests(self) -> list[Logged]:
        """The requests that got vectors."""
        return [r for r in self.log if r.status == 200]

    def start(self) -> FakeEmbeddingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeEmbeddingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def record(self, entry: Logged) -> None:
        with self._lock:
            self.log.append(entry)


def _handler_for(server: FakeEmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeEmbeddingServer
    protocol_version = "HTTP/1.1"  # keep-alive, like the real APIs

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    def do_POST(self) -> None:
        flavor = {"/v1/embeddings": "voyage", "/openai/v1/embeddings": "openai"}.get(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if flavor is None:
            self._send(404, {"detail": "Not Found"})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        status, payload, headers = self._answer(flavor, body, texts)
        if self.fake.delay_s:
            time.sleep(self.fake.delay_s)
        if status >= 400 and self.fake.echo_auth:
            payload = _echo(flavor, payload, str(self.headers.get("Authorization")))
        elif status == 200 and self.fake.nan_vectors:
            _poison(payload["data"][0])
        self.fake.record(
            Logged(
                flavor=flavor,
                path=self.path,
                status=status,
                n_texts=len(texts),
                tokens=sum(count_tokens(str(t)) for t in texts),
                model=body.get("model"),
                input_type=body.get("input_type"),
                body=body,
            )
        )
        self._send(status, payload, headers)

    def _answer(
        self, flavor: str, body: dict[str, Any], texts: list[str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        sent = {name: self.headers.get(name) for name in self.fake.required_headers}
        if sent != self.fake.required_headers:
            return (
                403,
                {"error": f"Forbidden: Cloudflare Access denied the request (sent {sent})"},
                {},
            )
        if self.headers.get("Authorization") != f"Bearer {self.fake.api_key}":
            return 401, _error(flavor, 401, _auth_message(flavor, self.headers)), {}
        fault = self.fake.next_fault()
        if fault is not None:
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            message = ERROR_TEXT.get(fault.status, "Injected failure.")
            return fault.status, _error(flavor, fault.status, message), headers
        answer = _voyage if flavor == "voyage" else _openai
        try:
            return 200, answer(self.fake, body, texts), {}
        except _BadRequest as exc:
            return 400, _error(flavor, 400, str(exc)), {}

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class _BadRequest(Exception):
    pass


def _poison(item: dict[str, Any]) -> None:
    """Make one answered vector all NaN, in whichever encoding it was sent."""
    vector = item["embedding"]
    if isinstance(vector, str):  # base64 float32
        n = len(base64.b64decode(vector)) // 4
        item["embedding"] = base64.b64encode(np.full(n, np.nan, "<f4").tobytes()).decode()
    else:
        item["embedding"] = [float("nan")] * len(vector)


def _echo(flavor: str, payload: dict[str, Any], authorization: str) -> dict[str, Any]:
    """``payload`` with the request's Authorization header quoted in its message and beside it."""
    said = f" (request had Authorization: {authorization})"
    if flavor == "voyage":
        return {"detail": str(payload.get("detail", "")) + said, "authorization": authorization}
    error = dict(payload.get("error") or {})
    error["message"] = str(error.get("message", "")) + said
    return {"error": error, "headers": {"Authorization": authorization}}


def _error(flavor: str, status: int, message: str) -> dict[str, Any]:
    if flavor == "voyage":
        return {"detail": message}
    kind = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    return {"error": {"message": message, "type": "invalid_request_error", "code": kind}}


def _auth_message(flavor: str, headers: Any) -> str:
    if flavor == "voyage":
        return "Provided API key is invalid."
    # OpenAI quotes part of the rejected key back; clients must not pass that on.
    given = str(headers.get("Authorization") or "").removeprefix("Bearer ")
    return f"Incorrect API key provided: {given[:3]}***{given[-4:]}."


def _voyage(fake: FakeEmbeddingServer, body: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    model = body.get("model")
    if model not in VOYAGE_DIMS:
        raise _BadRequest(f"Model {model} is not supported.")
    if body.get("input_type") not in (None, "query", "document"):
        raise _BadRequest("input_type must be None, 'query' or 'document'.")
    if not texts or len(texts) > VOYAGE_MAX_TEXTS:
        raise _BadRequest(f"The input list must contain 1 to {VOYAGE_MAX_TEXTS} items.")
    tokens = sum(count_tokens(t) for t in texts)
    limit = fake.max_tokens_per_request or VOYAGE_TOKENS_PER_REQUEST.get(model, 120_000)
    if tokens > limit:
        raise _BadRequest(
            f"Request to model '{model}' failed. The max allowed tokens per submitted batch is "
            f"{limit}. Your batch has {tokens} tokens after truncation."
        )
    dims = body.get("output_dimension") or VOYAGE_DIMS[model]
    if dims != VOYAGE_DIMS[model] and (model == "voyage-3-lite" or dims not in FLEXIBLE_DIMS):
        raise _BadRequest(f"output_dimension {dims} is not supported for {model}.")
    if body.get("output_dtype") not in (None, "float"):
        raise _BadRequest("The fake serves output_dtype 'float' only.")
    vectors: list[Any] = [fake_vector(t, dims) for t in texts]
    if body.get("encoding_format") == "base64":
        vectors = [base64.b64encode(np.asarray(v, "<f4").tobytes()).decode() for v in vectors]
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "embedding": v, "index": i} for i, v in enumerate(vectors)
        ],
        "model": model,
        "usage": {"total_tokens": tokens},
    }


def _openai(fake: FakeEmbeddingServer, body: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    unknown = sorted(set(body) - OPENAI_FIELDS)
    if unknown:
        raise _BadRequest(f"Unrecognized request argument supplied: {', '.join(unknown)}")
    if not texts or not body.get("model"):
        raise _BadRequest("'input' and 'model' are required.")
    dims = body.get("dimensions") or fake.openai_dims
    tokens = sum(count_tokens(t) for t in texts)
    # Answer in reverse order: the index field, not the position, says which text is which.
    data = [
        {"object": "embedding", "embedding": fake_vector(t, dims), "index": i}
        for i, t in enumerate(texts)
    ][::-1]
    return {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
