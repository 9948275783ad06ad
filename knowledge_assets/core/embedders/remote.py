"""What the HTTP providers have in common: batching, retries, response checks, dims discovery."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from knowledge_assets.core import secrets
from knowledge_assets.core.counts import counted
from knowledge_assets.core.embedders.base import (
    EmbeddingError,
    InputType,
    check_dims,
    check_input_type,
    normalize,
)
from knowledge_assets.core.embedders.batching import iter_batches
from knowledge_assets.core.embedders.retry import RetryPolicy, call_with_retry

# What a dimension probe embeds when ``dims`` is read before any vector was returned.
PROBE_TEXT = "dimension probe"
MAX_MESSAGE = 300


def shorten(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters: server bodies can be whole HTML pages."""
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"


class RemoteEmbedder:
    """Base of the embedders that call a server: subclasses implement :meth:`_request`.

    ``embed`` splits the texts with :func:`iter_batches` (count and token budget), sends each
    batch through :func:`call_with_retry`, checks that the answer has one vector per text and a
    consistent dimension, and normalises. ``dims`` may be unknown until the first response.
    """

    provider: str = ""
    model: str = ""

    def __init__(
        self,
        *,
        dims: int | None,
        batch_size: int,
        max_tokens: int,
        max_tokens_per_request: int | None,
        retry: RetryPolicy,
    ) -> None:
        if dims is not None and dims <= 0:
            raise ValueError(f"dims must be positive, not {dims}")
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, not {batch_size}")
        self._dims = dims
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.max_tokens_per_request = max_tokens_per_request
        self.retry = retry

    @property
    def dims(self) -> int:
        """The vector dimension, asking the server once with a probe text if not yet known."""
        if self._dims is None:
            self.embed([PROBE_TEXT], "query")
        assert self._dims is not None  # set by the probe's response check
        return self._dims

    def assume_dims(self, dims: int) -> None:
        """Take ``dims`` (what the store recorded for this model) as the dimension until a
        response says otherwise, so that reading :attr:`dims` sends no probe request (a billed
        call on every run). A server that now answers with another size still fails the run."""
        if self._dims is None:
            self._dims = dims

    @property
    def options(self) -> dict[str, Any]:
        """Non-secret settings recorded with the model; subclasses add theirs."""
        return {}

    @property
    def what(self) -> str:
        """How error messages name this embedder."""
        return f"{self.provider} embeddings ({self.model})"

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """One unit vector per text, in order, in as few requests as the limits allow."""
        check_input_type(input_type)
        out: list[list[float]] = []
        for indices in iter_batches(texts, self):
            batch = [texts[i] for i in indices]
            # Whatever a client library raises, no key it quotes leaves this call.
            vectors = secrets.call_contained(
                partial(
                    call_with_retry,
                    partial(self._request, batch, input_type),
                    self.retry,
                    self.what,
                )
            )
            if len(vectors) != len(batch):
                raise EmbeddingError(
                    f"{self.what} returned {counted(len(vectors), 'vector')}"
                    f" for {counted(len(batch), 'text')}"
                )
            self._dims = check_dims(vectors, self._dims, self.what)
            out.extend(normalize(vectors, self.what))
        return out

    def _request(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        """Embed one batch in one request; raise Transient or EmbeddingError on failure."""
        raise NotImplementedError
