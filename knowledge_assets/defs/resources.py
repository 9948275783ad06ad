"""Resources of the code location, configured from the environment (secrets via ``dg.EnvVar``)."""

from __future__ import annotations

import os

import dagster as dg

from knowledge_assets.core.settings import API_KEY_ENV, EmbedSettings, SourceSettings
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource


def _secret(name: str) -> dg.EnvVar | None:
    """An ``EnvVar`` for a secret that is set; resolved at run time, never stored in config."""
    return dg.EnvVar(name) if os.environ.get(name) else None


def build_resources() -> dict[str, dg.ConfigurableResource]:
    """The ``postgres``, ``vault`` and ``embedder`` resources for the current environment."""
    source = SourceSettings.from_env()
    embed = EmbedSettings.from_env()
    key_env = API_KEY_ENV.get(embed.provider)
    return {
        "postgres": PostgresResource(database_url=_secret("DATABASE_URL")),  # type: ignore[arg-type]
        "vault": VaultResource(
            kind=source.kind,
            path=str(source.vault_path),
            repo=source.github_repo,
            branch=source.github_branch,
            prefix=source.github_prefix,
            base_url=source.github_base_url,
            token=_secret("GITHUB_TOKEN"),  # type: ignore[arg-type]
            draft_markers=list(source.draft_markers),
            created_keys=list(source.created_keys),
            updated_keys=list(source.updated_keys),
            exclude=list(source.exclude),
        ),
        "embedder": EmbedderResource(
            provider=embed.provider,
            model=embed.model,
            base_url=embed.base_url,
            template=embed.template,
            api_key=_secret(key_env) if key_env else None,  # type: ignore[arg-type]
        ),
    }


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=build_resources())
