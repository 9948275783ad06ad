"""The notes that link to a note (Obsidian's linked mentions): wikilinks, embeds and Markdown
links outside code, resolved as the note view resolves them, so a note of the same name in
another folder, or a name only mentioned, is no link. On a real store and through the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.links import link_names, link_targets, name_key
from knowledge_assets.core.database import db
from knowledge_assets.core.links.backlinks import backlinks, note_backlinks
from tests.answer_support import sample_vault_database
from tests.api_support import api_client
from tests.mcp_support import json_of, server_env, stdio_session, text_of
from tests.migration_support import notes_to_rechunk, rerun_migration

VAULT = {
    "ideas.md": "# アイデア\n\n本文。\n",
    "archive/ideas.md": "# 古いアイデア\n\n昔の本文。\n",
    "日記.md": "# 日記\n\n今日のこと。\n",
    "projects/plan.md": "# 計画\n\n[[ideas]] を見る。\n",
    "notes/embed.md": "# 埋め込み\n\n![[ideas#見出し|別名]]\n",
    "notes/code.md": "# コード\n\n`[[ideas]]` と書く。\n\n```\n[[ideas]]\n```\n",
    "notes/mention.md": "# 言及\n\nideas という言葉だけ。\n",
    "notes/md-link.md": "# リンク\n\n[古い方](../archive/ideas.md) と [外](https://example.com/ideas.md)\n",
    "notes/encoded.md": "# 符号化\n\n[日本語](../%E6%97%A5%E8%A8%98.md#今日)\n",
    # A version superseded by its next one links to the root's ideas too.
    "plan-v1.md": "# 計画 初版\n\n[[ideas]] と [[plan-v2]]。\n",
    "plan-v2.md": "---\nprevious: plan-v1.md\n---\n# 計画 第二版\n\n本文。\n",
    "notes/history.md": "# 経緯\n\n初版は [[plan-v1]]。\n",  # a link to that older version
    "notes/wip.md": "---\ndraft: true\n---\n# 書きかけ\n\n[[ideas]]\n",
}


@pytest.mark.parametrize(
    ("body", "targets"),
    [
        (
            "[[a]] と [[b/c|別名]] と [[d#見出し]] と ![[e.png|30]]",
            [("a", False), ("b/c", False), ("d", False), ("e.png", False)],
        ),
        (
            "[x](../a.md) と [y](%E6%97%A5.md#h) と [z](<b c.md>)",
            [("../a.md", True), ("日.md", True), ("b c.md", True)],
        ),
        ("[w](https://example.com/a.md) [m](mailto:a@b) [h](#見出し)", []),
        ("`[[a]]` と\n```\n[[b]]\n```\n[[c]]", [("c", False)]),
        ("~~~md\n[[b]]\n~~~\n[[c]] と ``[[d]]``", [("c", False)]),  # a tilde fence, two backticks
    ],
)
def test_links_are_read_outside_code(body: str, targets: list[tuple[str, bool]]) -> None:
    assert list(link_targets(body)) == targets


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ("[[Ideas]] と ![[日記/ideas|x]] と [[ideas.md]]", ["ideas"]),  # one name, any case
        ("[a](../docs/) と [b](guide)", ["docs", "readme", "index", "guide"]),  # maybe folders
        ("[a](notes/x.md) と [[#見出し]]", ["x"]),  # a link within the note names nothing
        ("[[\u30d5\u3099]]", ["\u30d6"]),  # ブ decomposed (フ and a mark) is ブ composed
        ("本文だけ。", []),
    ],
)
def test_the_names_a_notes_links_lead_to(body: str, names: list[str]) -> None:
    assert link_names(body) == names


@pytest.mark.parametrize("path", ["Foo.md", "notes/Foo.MD", "notes/foo.Md", "Foo"])
def test_a_note_is_named_as_its_links_name_it(path: str) -> None:
    """A note saved as Foo.MD is the note [[Foo]] leads to, as the note view resolves it."""
    assert name_key(path) == link_names("[[Foo]]")[0] == "foo"


@pytest.fixture(scope="module")
def store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    vault = tmp_path_factory.mktemp("links") / "vault"
    for path, text in VAULT.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    with sample_vault_database(server_url, None, vault) as url:
        yield url


@pytest.mark.parametrize(
    ("path", "linking"),
    [
        ("ideas.md", ["projects/plan.md", "notes/embed.md"]),  # not the draft plan-v1.md
        ("archive/ideas.md", ["notes/md-link.md"]),  # not [[ideas]]: that is the root's
        ("日記.md", ["notes/encoded.md"]),  # a percent-encoded Markdown link
        ("notes/mention.md", []),
    ],
)
def test_backlinks_are_the_notes_whose_links_lead_here(
    store: str, path: str, linking: list[str]
) -> None:
    with db.connect(store) as conn:
        found, more = backlinks(conn, path, "local", "local")
    assert sorted(b.path for b in found) == sorted(linking) and not more


def test_the_api_lists_them_by_title(store: str) -> None:
    with api_client(store, Asker(LLMSettings())) as client:
        found = client.get("/api/backlinks/" + quote("ideas.md")).json()
        missing = client.get("/api/backlinks/nope.md")
    assert [(n["id"], n["title"]) for n in found["data"]] == [
        ("notes/embed.md", "埋め込み"),
        ("projects/plan.md", "計画"),
    ]
    assert found["count"] == 2 and found["more"] is False
    assert missing.status_code == 404


def test_a_superseded_version_lists_the_notes_linking_to_it_and_a_draft_none(store: str) -> None:
    """A link no current note answers leads to the older version it names, whose page the note
    view shows: it lists them. A draft is no note the view shows: None, as for a path that
    names nothing."""
    with db.connect(store) as conn:
        older = note_backlinks(conn, "plan-v1.md")
        assert note_backlinks(conn, "notes/wip.md") is None
        assert note_backlinks(conn, "nope.md") is None
        found = note_backlinks(conn, "plan-v2.md")
    assert older is not None and [b.path for b in older.notes] == ["notes/history.md"]
    assert found is not None and found.notes == [] and found.source == "local"


def test_the_command_line_lists_them(
    store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", store)
    assert main(["backlinks", "ideas"]) == 0  # without .md, as `get` takes it
    out = capsys.readouterr().out
    assert out.splitlines() == [
        " 1. 埋め込み",
        "    notes/embed.md",
        " 2. 計画",
        "    projects/plan.md",
    ]
    assert main(["backlinks", "ideas.md", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [n["path"] for n in data["notes"]] == ["notes/embed.md", "projects/plan.md"]
    assert data["path"] == "ideas.md" and data["more"] is False
    assert main(["backlinks", "notes/mention.md"]) == 0
    assert capsys.readouterr().out.strip() == "no note links to notes/mention.md"
    assert main(["backlinks", "idea.md"]) == 2
    err = capsys.readouterr().err
    assert err == "error: no note at 'idea.md'; did you mean ideas.md?\n"


def test_mcp_lists_them(store: str) -> None:
    with stdio_session(server_env(store)) as session:
        found = session.call("linking_docs", {"file_path": "ideas.md"})
        older = session.call("linking_docs", {"file_path": "plan-v1.md"})
        missing = session.call("linking_docs", {"file_path": "notes/wip.md"})  # a draft
    assert not found.is_error
    assert json_of(found) == {
        "source": "local",
        "file_path": "ideas.md",
        "linking": [
            {"title": "埋め込み", "path": "notes/embed.md", "source": "local"},
            {"title": "計画", "path": "projects/plan.md", "source": "local"},
        ],
        "more": False,
    }
    assert [n["path"] for n in json_of(older)["linking"]] == ["notes/history.md"]
    assert missing.is_error and "no note at 'notes/wip.md'" in text_of(missing)


def test_notes_with_links_stored_before_are_chunked_again_to_record_them(store: str) -> None:
    """sql/047: a store made before it has no link names; its notes with links are re-chunked
    (and only they), vectors kept."""
    with db.connect(store) as conn:
        conn.execute("UPDATE rag.latest_docs SET link_names = '{}'")
        conn.commit()
    rerun_migration(store, "047")
    with db.connect(store) as conn:
        assert notes_to_rechunk(conn) == sorted(
            [
                "notes/code.md",
                "notes/embed.md",
                "notes/encoded.md",
                "notes/history.md",
                "notes/md-link.md",
                "projects/plan.md",
            ]
        )
        report = refresh_chunks(conn)
        found, _ = backlinks(conn, "ideas.md", "local", "local")
    assert report.chunks_written == 0
    assert sorted(b.path for b in found) == ["notes/embed.md", "projects/plan.md"]
