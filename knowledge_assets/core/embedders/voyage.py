"""Voyage AI through the official ``voyageai`` client (production provider).

The client is created lazily with ``max_retries=0``: retries happen here, under one policy that
also honours ``Retry-After`` (voyageai 0.5.0's own retry loop ignores it and skips HTTP 500).
voyageai 0.5.0 posts to ``{base_url}/embeddings`` (default base ``https://api.voyageai.com/v1``)
and maps statuses to exceptions as follows: 401 AuthenticationError, 429 RateLimitError,
500 ServerError, 502/503/504 ServiceUnavailableError, other 4xx InvalidRequestError and friends;
every one carries ``http_status`` and the response ``headers``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from knowledge_assets.core import secrets
from knowledge_assets.core.embedders.base import EmbeddingError, InputType, redact
from knowledge_assets.core.embedders.remote import RemoteEmbedder, shorten
from knowledge_assets.core.embedders.retry import (
    RetryPolicy,
    Transient,
    is_retryable_status,
    parse_retry_after,
)

DEFAULT_MODEL = "voyage-3-lite"
# The hosted API refuses lists longer than 1,000; 128 keeps each request small enough that a
# retry repeats little work.
BATCH_SIZE = 128
API_MAX_BATCH = 1000


class VoyageModel(NamedTuple):
    """Published limits of one model (docs.voyageai.com/docs/embeddings)."""

    dims: int
    max_tokens: int  # context length per input
    tokens_per_request: int  # total tokens per request
    flexible: bool  # accepts output_dimension 256/512/1024/2048


VOYAGE_MODELS: dict[str, VoyageModel] = {
    "voyage-3-lite": VoyageModel(512, 32_000, 1_000_000, False),
    "voyage-3": VoyageModel(1024, 32_000, 320_000, False),
    "voyage-3-large": VoyageModel(1024, 32_000, 120_000, True),
    "voyage-3.5-lite": VoyageModel(1024, 32_000, 1_000_000, True),
    "voyage-3.5": VoyageModel(1024, 32_000, 320_000, True),
    "voyage-4-lite": VoyageModel(1024, 32_000, 1_000_000, True),
    "voyage-4": VoyageModel(1024, 32_000, 320_000, True),
    "voyage-4-large": VoyageModel(1024, 32_000, 120_000, True),
    "voyage-code-3": VoyageModel(1024, 32_000, 120_000, True),
    "voyage-multilingual-2": VoyageModel(1024, 32_000, 120_000, False),
    "voyage-finance-2": VoyageModel(1024, 32_000, 120_000, False),
    "voyage-law-2": VoyageModel(1024, 16_000, 120_000, False),
    "voyage-code-2": VoyageModel(1536, 16_000, 120_000, False),
    "voyage-large-2": VoyageModel(1536, 16_000, 120_000, False),
    "voyage-2": VoyageModel(1024, 4_000, 320_000, False),
}
# For a model missing from the table: the smallest published limits, so requests stay valid.
UNKNOWN_MODEL = VoyageModel(0, 4_000, 120_000, True)


class VoyageEmbedder(RemoteEmbedder):
    """``voyageai.Client.embed`` with ``input_type`` document/query, batched and retried."""

    provider = "voyage"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dims: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int | None = None,
        max_tokens_per_request: int | None = None,
        timeout: float = 60.0,
        truncation: bool = True,
        retry: RetryPolicy | None = None,
    ) -> None:
        spec = VOYAGE_MODELS.get(model, UNKNOWN_MODEL)
        if dims is not None and not spec.flexible and dims != spec.dims:
            raise ValueError(f"{model} returns {spec.dims}-dimensional vectors, not {dims}")
        if batch_size > API_MAX_BATCH:
            raise ValueError(f"Voyage accepts at most {API_MAX_BATCH} texts per request")
        super().__init__(
            dims=dims or spec.dims or None,
            batch_size=batch_size,
            max_tokens=max_tokens or spec.max_tokens,
            max_tokens_per_request=max_tokens_per_request or spec.tokens_per_request,
            retry=retry or RetryPolicy(),
        )
        self.model = model
        # Only ask for a dimension when it differs from what the model returns anyway:
        # fixed-size models reject output_dimension outright.
        self._output_dimension = dims if dims is not None and dims != spec.dims else None
        self._api_key = api_key
        secrets.register(api_key)
        self._base_url = base_url
        self._timeout = timeout
        self._truncation = truncation
        self._client: Any = None

    def __repr__(self) -> str:
        return f"VoyageEmbedder(model={self.model!r}, base_url={self._base_url!r})"

    @property
    def options(self) -> dict[str, Any]:
        """Non-secret settings recorded with the model."""
        opts: dict[str, Any] = {"truncation": self._truncation}
        if self._output_dimension is not None:
            opts["output_dimension"] = self._output_dimension
        if self._base_url:
            opts["base_url"] = self._base_url
        return opts

    def _get_client(self) -> Any:
        if self._client is None:
            import voyageai
            from voyageai.local.helpers import is_local_model

            if is_local_model(self.model):
                # voyageai would fetch this model's weights from Hugging Face.
                raise EmbeddingError(
                    f"{self.model} is a local voyageai model loaded from Hugging Face; use the "
                    "sentence-transformers provider with a local path instead"
                )
            self._client = voyageai.Client(
                api_key=self._api_key, max_retries=0, timeout=self._timeout, base_url=self._base_url
            )
        return self._client

    def _request(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        from voyageai.error import VoyageError

        client = self._get_client()
        try:
            result = client.embed(
                texts,
                model=self.model,
                input_type=input_type,
                truncation=self._truncation,
                output_dimension=self._output_dimension,
            )
        except VoyageError as exc:
            error = self._translate(exc)
        else:
            return [list(map(float, v)) for v in result.embeddings]
        # Raised outside the handler, so the client's exception (whose message may quote the
        # key the server echoed) is neither its __cause__ nor its __context__.
        raise error

    def _translate(self, exc: Exception) -> Exception:
        """The Transient or EmbeddingError that a voyageai exception amounts to."""
        from voyageai import error as ve

        status: int | None = getattr(exc, "http_status", None)
        text = getattr(exc, "user_message", None) or str(exc) or type(exc).__name__
        message = shorten(redact(str(text), self._api_key or getattr(self._client, "api_key", "")))
        if isinstance(exc, ve.AuthenticationError) or status in (401, 403):
            code = f"HTTP {status}" if status else "no API key"
            return EmbeddingError(
                f"{self.what}: authentication failed ({code}): {message} "
                "Check VOYAGE_API_KEY; the request was not retried."
            )
        transient = (ve.RateLimitError, ve.ServerError, ve.ServiceUnavailableError, ve.TryAgain)
        network = (ve.Timeout, ve.APIConnectionError)
        if isinstance(exc, transient + network) or is_retryable_status(status):
            headers = getattr(exc, "headers", None)
            return Transient(message, status, parse_retry_after(headers))
        code = f"HTTP {status}" if status else type(exc).__name__
        return EmbeddingError(f"{self.what} failed ({code}): {message}")
