"""Versions linked by ``previous`` (seed 000 keeps every version as history): a note lists the
versions it replaces, newest first, through a chain of any length, once each, itself never
(in a cycle of ``previous``); a draft version is never served by the note view.
On real Postgres; the views themselves in test_api, test_mcp_server and test_search_cli."""

from __future__ import annotations

from pathlib import Path

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.database import db
from knowledge_assets.core.search.notes import get_doc
from tests.api_support import api_client
from tests.test_search import notes_store


def _note(title: str, previous: str | None = None, extra: str = "") -> str:
    front = f"title: {title}\n" + (f"previous: {previous}\n" if previous else "") + extra
    return f"---\n{front}---\n# {title}\n\n{title}の本文。\n"


def test_a_note_lists_the_versions_it_replaces_newest_first(
    server_url: str, tmp_path: Path
) -> None:
    notes = {
        "v1.md": _note("初版"),
        "v2.md": _note("第二版", "v1.md"),
        "v3.md": _note("第三版", "v2.md"),
        "loop-a.md": _note("輪A", "loop-b.md"),
        "loop-b.md": _note("輪B", "loop-a.md"),
        "draft-old.md": _note("下書きの旧版", extra="draft: true\n"),
        "draft-new.md": _note("新版", "draft-old.md"),
    }
    with notes_store(server_url, tmp_path, notes) as url, db.connect(url) as conn:
        chain = {p: get_doc(conn, p) for p in ("v3.md", "v2.md", "v1.md", "loop-a.md", "loop-b.md")}
        with api_client(url, Asker(LLMSettings())) as client:
            served = {p: client.get(f"/api/notes/{p}") for p in ("v1.md", "draft-old.md")}
    assert chain["v3.md"]["versions"] == [("v2.md", "第二版"), ("v1.md", "初版")]
    assert chain["v2.md"]["versions"] == [("v1.md", "初版")]
    assert chain["v1.md"]["versions"] == []
    # A cycle keeps one of its notes as the latest (test_latest): it lists the other, which
    # lists nothing; neither lists itself.
    a, b = ([path for path, _ in chain[p]["versions"]] for p in ("loop-a.md", "loop-b.md"))
    assert sorted([a, b]) == [[], ["loop-a.md" if b else "loop-b.md"]]
    assert served["v1.md"].status_code == 200
    assert served["v1.md"].json()["data"]["supersededBy"] == "v2.md"
    assert served["draft-old.md"].status_code == 404  # a draft, though a newer version names it
