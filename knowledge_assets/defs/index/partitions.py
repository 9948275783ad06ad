"""One ``embeddings`` partition per embedding model, so switching model is a backfill."""

import dagster as dg

from knowledge_assets.core import models
from knowledge_assets.core.settings import EmbedSettings, env
from knowledge_assets.resources import PostgresResource


def model_keys() -> list[str]:
    """Partition keys: ``KA_EMBED_MODELS`` (comma-separated) or the configured model plus Voyage."""
    listed = [k.strip() for k in env("KA_EMBED_MODELS").split(",") if k.strip()]
    if listed:
        return list(dict.fromkeys(listed))
    settings = EmbedSettings.from_env()
    default = settings.model or settings.provider
    return list(dict.fromkeys([default, "voyage-3-lite"]))


embedding_models = dg.StaticPartitionsDefinition(model_keys())


def default_model_key() -> str:
    """The partition of the configured model (the first key)."""
    return model_keys()[0]


def search_partition(postgres: PostgresResource) -> str:
    """The partition that keeps search current: the active model's, when it is a partition,
    else the configured model's (before any model is active, or when the store is unreachable,
    in which case the run itself reports the error)."""
    try:
        with postgres.connect() as conn:
            active = models.active_model(conn)
    except Exception:  # an unavailable store must not fail a tick: the run reports it
        return default_model_key()
    keys = model_keys()
    return active if active in keys else default_model_key()
