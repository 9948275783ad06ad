"""Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, OpenRouter, Ollama, TEI).

The wire format is OpenAI's: ``{"model", "input": [...], "encoding_format": "float"}`` in,
``{"data": [{"embedding": [...], "index": i}], ...}`` out. There is no ``input_type``; models
that want one (e5 served through TEI, for instance) get it as a text prefix instead.
"""

from __future__ import annotations

from typing import Any

from knowledge_assets.core import secrets
from knowledge_assets.core.embedders.base import EmbeddingError, InputType, Prefixes, redact
from knowledge_assets.core.embedders.remote import RemoteEmbedder, shorten
from knowledge_assets.core.embedders.retry import (
    RetryPolicy,
    Transient,
    is_retryable_status,
    parse_retry_after,
)
from knowledge_assets.core.settings import embed_headers

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
# OpenAI's published figures; other servers are unknown, so they get conservative defaults.
OPENAI_MODELS: dict[str, tuple[int, int]] = {  # name -> (dims, max input tokens)
    "text-embedding-3-small": (1536, 8191),
    "text-embedding-3-large": (3072, 8191),
    "text-embedding-ada-002": (1536, 8191),
}
OPENAI_TOKENS_PER_REQUEST = 300_000
# TEI's default --max-client-batch-size is 32, the smallest limit among the usual servers.
BATCH_SIZE = 32
# Most small open embedding models (e5, bge, MiniLM) stop at 512 positions.
UNKNOWN_MAX_TOKENS = 512


class OpenAICompatEmbedder(RemoteEmbedder):
    """Embeddings from an OpenAI-compatible server, over httpx.

    ``model`` is stored as ``openai:<name>`` so that vectors from a self-hosted model never
    collide with another provider's model of the same name; ``model_name`` is sent to the server.
    """

    provider = "openai"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dims: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int | None = None,
        max_tokens_per_request: int | None = None,
        timeout: float = 60.0,
        prefixes: bool | None = None,
        headers: dict[str, str] | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        known_dims, known_max = OPENAI_MODELS.get(model, (None, UNKNOWN_MAX_TOKENS))
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        is_openai = self.base_url == OPENAI_BASE_URL
        super().__init__(
            dims=dims or known_dims,
            batch_size=batch_size,
            max_tokens=max_tokens or known_max,
            max_tokens_per_request=max_tokens_per_request
            or (OPENAI_TOKENS_PER_REQUEST if is_openai else None),
            retry=retry or RetryPolicy(),
        )
        self.model_name = model
        self.model = f"openai:{model}"
        # Servers (TEI, Ollama) pass texts through as given, so an e5 model needs its
        # "query: "/"passage: " prefixes from us; ``prefixes=False`` turns that off.
        self.prefixes = Prefixes.for_model(model, prefixes)
        # text-embedding-3 models shorten their vectors on request; others ignore or refuse it.
        self._dimensions = dims if dims and known_dims and dims != known_dims else None
        self._api_key = api_key
        secrets.register(api_key)
        self._timeout = timeout
        # Extra headers (an access proxy's credentials) are secrets as the key is: from the
        # environment (settings.embed_headers) unless given, and masked in every message.
        self._headers = dict(embed_headers() if headers is None else headers)
        for value in self._headers.values():
            secrets.register(value)
        self._client: Any = None

    def __repr__(self) -> str:
        return f"OpenAICompatEmbedder(model={self.model_name!r}, base_url={self.base_url!r})"

    @property
    def options(self) -> dict[str, Any]:
        """Non-secret settings recorded with the model."""
        return {"base_url": self.base_url, "model_name": self.model_name} | (
            self.prefixes.as_options()
        )

    def _get_client(self) -> Any:
        if self._client is None:
            import httpx

            headers = {"Content-Type": "application/json", **self._headers}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._client = httpx.Client(headers=headers, timeout=self._timeout)
        return self._client

    def close(self) -> None:
        """Close the HTTP connection pool."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _request(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        import httpx

        body: dict[str, Any] = {
            "model": self.model_name,
            "input": self.prefixes.apply(texts, input_type),
            "encoding_format": "float",
        }
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        error: Transient | None = None
        try:
            response = self._get_client().post(f"{self.base_url}/embeddings", json=body)
        except httpx.TransportError as exc:  # connect errors, timeouts, dropped connections
            error = Transient(shorten(redact(str(exc) or type(exc).__name__, self._api_key)))
        if error is not None:
            raise error  # outside the handler: no chained client exception
        if response.status_code >= 400:
            raise self._http_error(response)
        return self._parse(response)

    def _http_error(self, response: Any) -> Exception:
        status = response.status_code
        if status in (401, 403):
            # The body is not quoted: OpenAI echoes part of the rejected key in it.
            return EmbeddingError(
                f"{self.what}: authentication failed (HTTP {status}) at {self.base_url}; "
                "check the API key (and KA_EMBED_HEADERS, for an endpoint behind an access"
                " proxy such as Cloudflare Access). The request was not retried."
            )
        message = shorten(redact(_error_message(response), self._api_key))
        if is_retryable_status(status):
            return Transient(message, status, parse_retry_after(response.headers))
        return EmbeddingError(f"{self.what} failed (HTTP {status}): {message}")

    def _parse(self, response: Any) -> list[list[float]]:
        try:
            data = response.json()["data"]
            ordered = sorted(data, key=lambda item: item.get("index", 0))
            return [[float(x) for x in item["embedding"]] for item in ordered]
        except (ValueError, KeyError, TypeError, AttributeError):
            text = shorten(redact(response.text, self._api_key), 200)
        raise EmbeddingError(f"{self.what}: unexpected response {text!r}")


def _error_message(response: Any) -> str:
    """The error text of an OpenAI-style (``{"error": {"message"}}``) or other error body."""
    try:
        body = response.json()
    except ValueError:
        return str(response.text) or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        for key in ("error", "detail", "message"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return str(body)
