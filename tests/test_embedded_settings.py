"""The embedded server runs with memory in proportion to the machine (not PostgreSQL's 128 MB of
shared buffers), from a settings file it re-reads at each start."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.database import embedded

GB = 2**30


@pytest.mark.parametrize(
    ("memory", "configured", "shared"),
    [
        (24 * GB, "", "2048MB"),  # an eighth, at most 2 GB
        (8 * GB, "", "1024MB"),
        (512 * 2**20, "", "128MB"),  # never below PostgreSQL's default
        (None, "", "512MB"),  # memory unknown: sized for 4 GB
        (24 * GB, "3GB", "3072MB"),  # KA_SHARED_BUFFERS wins, above the cap too
        (24 * GB, "64MB", "128MB"),
    ],
)
def test_shared_buffers_follow_the_machine_or_the_setting(
    monkeypatch: pytest.MonkeyPatch, memory: int | None, configured: str, shared: str
) -> None:
    monkeypatch.setenv("KA_SHARED_BUFFERS", configured)
    settings = embedded.server_settings(memory)
    assert settings["shared_buffers"] == shared
    assert settings["max_wal_size"] == "4GB"


def test_a_bad_size_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_SHARED_BUFFERS", "lots")
    with pytest.raises(ValueError, match="KA_SHARED_BUFFERS='lots'"):
        embedded.server_settings(8 * GB)


def test_settings_are_written_once_and_included_once(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    conf.write_text("shared_buffers = 128MB\n", encoding="utf-8")
    settings = {"shared_buffers": "256MB"}
    assert embedded.write_settings(tmp_path, settings) is True
    assert embedded.write_settings(tmp_path, settings) is False  # unchanged: not rewritten
    assert embedded.write_settings(tmp_path, {"shared_buffers": "512MB"}) is True
    text = conf.read_text(encoding="utf-8")
    assert text.count("include_if_exists = 'knowledge_assets.conf'") == 1
    assert text.startswith("shared_buffers = 128MB\n")  # the server's own file is kept
    assert "shared_buffers = '512MB'" in (tmp_path / embedded.SETTINGS_FILE).read_text("utf-8")


@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="embedded server only")
def test_a_new_embedded_store_starts_with_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KA_SHARED_BUFFERS", "160MB")
    server = embedded.start(tmp_path / "pg")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            row = conn.execute(
                "SELECT current_setting('shared_buffers'), current_setting('max_wal_size')"
            ).fetchone()
    finally:
        embedded._stop(server)
    assert row == ("160MB", "4GB")
