"""Secrets never leave: loopback servers that echo the Authorization header in their error
bodies, then every message, chained exception, traceback and Dagster event is searched for it."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest

from knowledge_assets.core import failures, secrets
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import EmbeddingError, make_embedder
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.defs.index.assets import build_embeddings, chunks
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.mcp.failures import describe_failure
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from tests.fakes.github_server import FakeGitHub
from tests.fakes.voyage_server import FakeEmbeddingServer

from .conftest import EXAMPLE_VAULT

KEY = "pa-Zx9SecretVoyageKey0123456789"
TOKEN = "ghp_EchoedTokenShouldNeverShow0123456789"


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def _everything(exc: BaseException) -> str:
    """What a user or a log could ever see of ``exc``: its traceback and every chained part."""
    parts = ["".join(traceback.format_exception(exc))]
    for item in _chain(exc):
        parts += [str(item), repr(item), repr(item.args), repr(vars(item))]
    return "\n".join(parts)


@pytest.fixture
def echoing() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(api_key="the-right-key-000", echo_auth=True) as fake:
        yield fake


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("Authorization: Bearer abcdef0123", "abcdef0123"),
        ('{"api_key": "k-123456789"}', "k-123456789"),
        ("key sk-proj-aaaaaaaaaaaaaaaaaaaa1 rejected", "sk-proj-aaaaaaaaaaaaaaaaaaaa1"),
        ("token ghp_aaaaaaaaaaaaaaaaaaaaaaaa1 bad", "ghp_aaaaaaaaaaaaaaaaaaaaaaaa1"),
        ("x-api-key=Q1w2E3r4T5", "Q1w2E3r4T5"),
    ],
)
def test_redact_masks_credentials_by_shape(text: str, hidden: str) -> None:
    assert hidden not in secrets.redact(text)


@pytest.mark.parametrize("text", ["token limit exceeded", "max tokens per request: 1000", "ok"])
def test_redact_leaves_ordinary_text(text: str) -> None:
    assert secrets.redact(text) == text


def test_redact_masks_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plainvalue42")
    assert secrets.redact("the server said plainvalue42") == "the server said ***"


@pytest.mark.parametrize("provider", ["voyage", "openai"])
@pytest.mark.parametrize("status", [401, 400, 500])
def test_echoed_key_leaves_no_trace_in_the_exception_chain(
    provider: str, status: int, echoing: FakeEmbeddingServer
) -> None:
    base = echoing.voyage_base_url if provider == "voyage" else echoing.openai_base_url
    model = None if provider == "voyage" else "fake-embed"
    if status != 401:
        echoing.api_key = KEY  # accepted, then the injected fault is echoed
        echoing.fail(status, times=3)
    embedder = make_embedder(provider, model, api_key=KEY, base_url=base, max_retries=2,
                             sleep=lambda _s: None)  # fmt: skip
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["テキスト"], "query")

    assert echoing.log and all(r.status == status for r in echoing.log)  # the key was echoed
    seen = _everything(info.value)
    assert KEY not in seen and KEY[3:15] not in seen
    assert provider in str(info.value)  # still says which provider failed


def test_github_echoing_the_token_leaves_no_trace() -> None:
    with FakeGitHub(token="another-token-1234", echo_auth=True) as gh:
        source = GitHubSource(gh.repo, token=TOKEN, base_url=gh.base_url, sleep=lambda _s: None)
        with pytest.raises(SourceError) as rejected:
            source.head()
        gh.token = TOKEN
        gh.fail_next(500, times=10)
        with pytest.raises(SourceError) as failing:
            GitHubSource(
                gh.repo, token=TOKEN, base_url=gh.base_url, max_retries=1, sleep=lambda _s: None
            ).head()
    for info in (rejected, failing):
        assert TOKEN not in _everything(info.value)
    assert "GITHUB_TOKEN" in str(rejected.value)


def test_nan_vectors_are_rejected_naming_the_provider() -> None:
    with FakeEmbeddingServer(nan_vectors=True) as fake:
        for provider, base in (("voyage", fake.voyage_base_url), ("openai", fake.openai_base_url)):
            model = None if provider == "voyage" else "fake-embed"
            embedder = make_embedder(provider, model, api_key=fake.api_key, base_url=base)
            with pytest.raises(EmbeddingError, match=f"{provider} embeddings.*NaN or infinity"):
                embedder.embed(["a", "b"], "document")


def test_dagster_event_log_in_postgres_holds_no_echoed_key(
    db_url: str, tmp_path: Path, echoing: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A run that fails on an echoing provider: STEP_FAILURE / RUN_FAILURE and every other
    event stored in Dagster's Postgres tables, and the terminal output, are free of the key."""
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    key = "voyage:voyage-3-lite"
    voyage_embeddings = build_embeddings(dg.StaticPartitionsDefinition([key]))
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(EXAMPLE_VAULT)),
        "embedder": EmbedderResource(
            provider="voyage", base_url=echoing.voyage_base_url,
            api_key=dg.EnvVar("VOYAGE_API_KEY"),  # type: ignore[arg-type]
        ),
    }  # fmt: skip
    storage = {"postgres": {"postgres_url": db.dagster_storage_url(db_url)}}
    with dg.instance_for_test(overrides={"storage": storage}, temp_dir=str(tmp_path)) as instance:
        result = dg.materialize(
            [raw_docs, latest_docs, chunks, voyage_embeddings], resources=resources,
            partition_key=key, instance=instance, raise_on_error=False,
        )  # fmt: skip
        assert not result.success
        failure = result.get_step_failure_events()[0]
        assert "authentication failed" in str(failure.step_failure_data.error)
    with psycopg.connect(db_url) as conn:
        stored = conn.execute("SELECT string_agg(event, '\n') FROM event_logs").fetchone()
        runs = conn.execute("SELECT string_agg(run_body, '\n') FROM runs").fetchone()
        kinds = {r[0] for r in conn.execute("SELECT dagster_event_type FROM event_logs")}
    assert "STEP_FAILURE" in kinds and "PIPELINE_FAILURE" in kinds  # RUN_FAILURE, stored
    assert stored and "authentication failed" in stored[0]
    assert echoing.log[0].status == 401  # the server did echo the key it was sent
    output = capfd.readouterr()
    for text in (stored[0], runs[0] if runs else "", output.out, output.err):
        assert KEY not in text


@pytest.mark.parametrize("name", ["KA_READER_URL", "KA_QA_WRITER_URL", "DATABASE_URL"])
@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ka_reader:Sup3r S3cretPw@127.0.0.1:1/notes",  # a space: libpq quotes it
        "ka_reader:Sup3rS3cretPw@localhost",  # no scheme: libpq quotes the whole string
    ],
)
def test_a_database_url_libpq_cannot_parse_shows_no_password(
    monkeypatch: pytest.MonkeyPatch, name: str, url: str
) -> None:
    """The serve command and every MCP tool printed libpq's error, password and all."""
    monkeypatch.setenv(name, url)
    with pytest.raises(psycopg.Error) as caught:
        psycopg.connect(url, connect_timeout=1)
    assert "S3cretPw" in str(caught.value)  # what libpq says
    assert "S3cretPw" not in failures.first_line(caught.value)
    assert "S3cretPw" not in failures.describe(caught.value)
    assert "S3cretPw" not in describe_failure(caught.value)


@pytest.mark.parametrize("name", ["KA_LLM_API_KEY", "KA_API_TOKEN"])
def test_the_answer_and_api_keys_are_masked(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "local-key-0123456789")
    assert secrets.redact("echo: local-key-0123456789") == "echo: ***"


def test_the_password_of_a_base_url_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_LLM_BASE_URL", "https://me:hunter2hunter2@llm.example/v1")
    assert "hunter2" not in secrets.redact("cannot reach https://me:hunter2hunter2@llm.example")


@pytest.mark.parametrize("name", ["KA_READER_URL", "KA_QA_WRITER_URL"])
def test_a_role_url_libpq_cannot_read_is_named_before_any_connection(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Named like DATABASE_URL, with the part libpq quotes (a piece of the password) left out."""
    from knowledge_assets.api.settings import writer_url
    from knowledge_assets.core.database.db import DatabaseUrlError
    from knowledge_assets.mcp.reader import reader_url

    monkeypatch.setenv(name, "ka_reader:Sup3r S3cretPw@localhost")
    resolve = reader_url if name == "KA_READER_URL" else writer_url
    with pytest.raises(DatabaseUrlError) as caught:
        resolve("postgresql://me@localhost/notes")
    message = describe_failure(caught.value)
    assert caught.value.variable == name and "Sup3r" not in message
    assert message.startswith(f"setup error: {name} cannot be read (missing")
