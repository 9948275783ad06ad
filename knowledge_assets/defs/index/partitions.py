"""One ``embeddings`` partition per embedding model, so switching model is a backfill."""

import dagster as dg

from knowledge_assets.core.settings import EmbedSettings, env


def model_keys() -> list[str]:
    """Partition keys: ``KA_EMBED_MODELS`` (comma-separated) or the configured model plus Voyage."""
    listed = [k.strip() for k in env("KA_EMBED_MODELS").split(",") if k.strip()]
    if listed:
        return list(dict.fromkeys(listed))
    settings = EmbedSettings.from_env()
    default = settings.model or settings.provider
    return list(dict.fromkeys([default, "voyage-3-lite"]))


embedding_models = dg.StaticPartitionsDefinition(model_keys())
