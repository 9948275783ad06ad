"""Split a list of texts into requests that respect a count limit and a token budget."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from knowledge_assets.core.embedders.base import Embedder, estimate_tokens


def iter_batches(
    texts: Sequence[str],
    embedder: Embedder,
    max_tokens_per_request: int | None = None,
    estimate: Callable[[str], int] = estimate_tokens,
) -> Iterator[list[int]]:
    """Yield lists of indices into ``texts``, in order, each one request's worth.

    A batch holds at most ``embedder.batch_size`` texts and, when a budget is known, at most
    ``max_tokens_per_request`` estimated tokens (default: the embedder's own
    ``max_tokens_per_request`` attribute, if it has one). A single text over the budget still
    gets a batch of its own: the provider truncates it or refuses it with a clear error, which is
    better than never sending it.
    """
    limit = max(1, int(embedder.batch_size))
    budget = max_tokens_per_request
    if budget is None:
        budget = getattr(embedder, "max_tokens_per_request", None)
    batch: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        cost = estimate(text) if budget is not None else 0
        if batch and (len(batch) >= limit or (budget is not None and used + cost > budget)):
            yield batch
            batch, used = [], 0
        batch.append(i)
        used += cost
    if batch:
        yield batch
