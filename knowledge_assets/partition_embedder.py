"""The embedder of an ``embeddings`` partition: a model key resolved against the configured
embedder resource, or a ``SetupError`` saying why that model cannot run here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge_assets.setup_checks import SetupError

if TYPE_CHECKING:
    from knowledge_assets.core.embedders.base import Embedder
    from knowledge_assets.resources import EmbedderResource


def embedder_for_key(model_key: str, resource: EmbedderResource) -> Embedder:
    """Resolve a model partition key to a ready-to-use embedder, or a ``SetupError`` that says
    why it cannot run. The resource's own model uses its base URL, key and dimension; another
    provider's model takes its key from the environment (``VOYAGE_API_KEY``, ``OPENAI_API_KEY``)."""
    from knowledge_assets.core.embedders import make_embedder
    from knowledge_assets.core.index.model_keys import ModelSpec, parse_key, unavailable_reason
    from knowledge_assets.core.settings import api_key_for

    try:
        spec = parse_key(model_key)
        own = ModelSpec.of(resource.provider, resource.model) == spec
    except ValueError as exc:
        raise SetupError(f"embeddings partition {model_key!r}: {exc}") from None
    same_provider = spec.provider == _provider_or_none(resource.provider)
    api_key = (resource.api_key if same_provider else None) or api_key_for(spec.provider)
    base_url = (resource.base_url if same_provider else "") or None
    reason = unavailable_reason(spec, api_key=api_key, base_url=base_url)
    if reason:
        raise SetupError(f"embeddings partition {spec.key} cannot run: {reason}")
    try:
        return make_embedder(
            spec.provider, spec.name or None, api_key=api_key, base_url=base_url,
            dims=resource.dims if own else None,
        )  # fmt: skip
    except ValueError as exc:
        raise SetupError(f"embeddings partition {spec.key} cannot run: {exc}") from None


def _provider_or_none(provider: str) -> str | None:
    from knowledge_assets.core.embedders import normalize_provider

    try:
        return normalize_provider(provider)
    except ValueError:
        return None
