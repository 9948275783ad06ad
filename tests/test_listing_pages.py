"""Every listing of notes comes in pages that walk the whole of it: the core's notes_kept, the
CLI's ``search`` of operators alone and ``tags TAG`` (``--offset``), MCP's search_docs in mode
``list`` and tagged_docs (``offset`` and ``next_offset``) and the API's ``/api/search/notes``.

The store holds notes updated and created on the same day, so only the tie-breaker (the path)
keeps their order from one page to the next."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core.database import db
from knowledge_assets.core.search import SearchFilters
from knowledge_assets.core.search.listing import MAX_OFFSET, next_offset, notes_kept
from knowledge_assets.core.search.notes import notes_tagged
from knowledge_assets.listing_cli import shown_page
from tests.api_support import api_client
from tests.mcp_support import McpClient, json_of, server_env, stdio_session, text_of
from tests.test_search import ingest

SAME_DAY = [f"日記/same-{i:02d}.md" for i in range(12)]  # one day's import: dates all tie
NEWER = ["日記/newer-a.md", "日記/newer-b.md"]
FOLDER = {*SAME_DAY, *NEWER}
TAG = "同日"  # carried by the same-day notes only
PAGE_SIZES = [1, 3, 5, 12, 14, 50]


@pytest.mark.parametrize(
    ("offset", "shown", "total", "after"),
    [(0, 5, 12, 5), (5, 5, 12, 10), (10, 2, 12, None), (0, 12, 12, None), (0, 0, 0, None),
     (20, 0, 12, None), (11, 1, 12, None)],
)  # fmt: skip
def test_the_next_page_starts_after_this_one_until_the_last_note(
    offset: int, shown: int, total: int, after: int | None
) -> None:
    assert next_offset(offset, shown, total) == after


@pytest.mark.parametrize(
    ("total", "shown", "offset", "limit", "said"),
    [(3, 3, 0, 50, ""),
     (120, 50, 0, 50, ", 1-50 shown (--offset 50 for the next 50)"),
     (120, 50, 50, 50, ", 51-100 shown (--offset 100 for the next 20)"),
     (120, 20, 100, 50, ", 101-120 shown"),
     (120, 0, 500, 50, ", none from --offset 500"),
     (3_000, 50, 1_000, 50, ", 1,001-1,050 shown (--offset 1050 for the next 50)")],
)  # fmt: skip
def test_the_cli_says_which_notes_a_page_shows_and_how_to_get_the_next(
    total: int, shown: int, offset: int, limit: int, said: str
) -> None:
    assert shown_page(total, shown, offset, limit) == said


@pytest.fixture(scope="module")
def store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.conftest import new_database

    vault = tmp_path_factory.mktemp("vault")
    (vault / "日記").mkdir()
    for path in SAME_DAY:
        _note(vault / path, "2026-01-01", "2026-01-05", [TAG])
    for path, day in zip(NEWER, ("2026-02-01", "2026-02-02"), strict=True):
        _note(vault / path, day, day, ["日記"])
    _note(vault / "other.md", "2025-12-01", "2025-12-01", [])
    with new_database(server_url) as url:
        db.migrate(url)
        ingest(url, None, vault)  # listings read no vectors
        yield url


def _note(path: Path, created: str, updated: str, tags: list[str]) -> None:
    front = f"---\ncreated: {created}\nupdated: {updated}\ntags: {tags}\n---\n"
    path.write_text(f"{front}# {path.stem}\n\n{path.stem} の記録。\n", encoding="utf-8")


@pytest.fixture
def conn(store: str) -> Iterator[psycopg.Connection]:
    with db.connect(store) as c:
        yield c


def _walk(page: Callable[[int], tuple[int, list[str], int | None]]) -> tuple[int, list[str]]:
    """Every page of a listing, following each page's next offset from 0: the total and the
    notes in the order the pages gave them."""
    notes: list[str] = []
    offset: int | None = 0
    totals = set()
    while offset is not None:
        total, paths, offset = page(offset)
        totals.add(total)
        notes += paths
        assert len(notes) <= total, "pages went past the total"
    assert len(totals) == 1, f"the total changed from page to page: {totals}"
    return totals.pop(), notes


def _core_page(conn: psycopg.Connection, limit: int) -> Callable[[int], tuple[int, list[str], int | None]]:  # fmt: skip
    def page(offset: int) -> tuple[int, list[str], int | None]:
        total, notes = notes_kept(conn, SearchFilters(path_contains=("日記/",)), limit=limit, offset=offset)  # fmt: skip
        return total, [n.file_path for n in notes], next_offset(offset, len(notes), total)

    return page


@pytest.mark.parametrize("limit", PAGE_SIZES)
def test_pages_of_a_listing_are_the_whole_listing_once_even_when_dates_tie(
    conn: psycopg.Connection, limit: int
) -> None:
    _, every = notes_kept(conn, SearchFilters(), limit=50)
    assert len({(n.created, n.updated) for n in every if n.file_path in SAME_DAY}) == 1
    total, walked = _walk(_core_page(conn, limit))
    assert total == len(FOLDER) and len(walked) == len(set(walked)) == total
    # Newest first; the notes of one day by path, whichever page they fall on.
    assert walked == [*sorted(NEWER, reverse=True), *sorted(SAME_DAY)]


@pytest.mark.parametrize("limit", PAGE_SIZES)
def test_pages_of_a_tags_notes_are_the_whole_listing_once(
    conn: psycopg.Connection, limit: int
) -> None:
    def page(offset: int) -> tuple[int, list[str], int | None]:
        total, notes = notes_tagged(conn, TAG, limit=limit, offset=offset)
        return total, [n.file_path for n in notes], next_offset(offset, len(notes), total)

    assert _walk(page) == (len(SAME_DAY), sorted(SAME_DAY))


def test_a_page_past_the_end_is_empty_with_the_total(conn: psycopg.Connection) -> None:
    assert notes_kept(conn, SearchFilters(), limit=5, offset=100) == (len(FOLDER) + 1, [])
    assert notes_tagged(conn, TAG, limit=5, offset=MAX_OFFSET) == (len(SAME_DAY), [])


@pytest.mark.parametrize(("limit", "offset"), [(5, -1), (0, 0), (5, MAX_OFFSET + 1)])
def test_the_core_refuses_a_page_that_cannot_be(
    conn: psycopg.Connection, limit: int, offset: int
) -> None:
    with pytest.raises(ValueError, match="offset from 0 to"):
        notes_kept(conn, SearchFilters(), limit=limit, offset=offset)


@pytest.fixture
def cli_store(store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    return store


@pytest.mark.parametrize(
    ("argv", "every"),
    [(["search", "path:日記/"], [*sorted(NEWER, reverse=True), *sorted(SAME_DAY)]),
     (["tags", TAG], sorted(SAME_DAY))],
)  # fmt: skip
def test_the_cli_pages_through_a_listing_with_offset(
    cli_store: str, capsys: pytest.CaptureFixture[str], argv: list[str], every: list[str]
) -> None:
    def page(offset: int) -> tuple[int, list[str], int | None]:
        assert main([*argv, "--limit", "5", "--offset", str(offset), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["offset"] == offset
        return out["total"], [n["file_path"] for n in out["notes"]], out["next_offset"]

    assert _walk(page) == (len(every), every)
    assert main([*argv, "--limit", "5", "--offset", "5"]) == 0
    out = capsys.readouterr().out
    assert f", 6-10 shown (--offset 10 for the next {min(5, len(every) - 10)})" in out
    assert main([*argv, "--offset", "99", "--json"]) == 0
    past = json.loads(capsys.readouterr().out)
    assert (past["total"], past["notes"], past["next_offset"]) == (len(every), [], None)


@pytest.mark.parametrize(
    ("value", "says"),
    [("-1", "-1 is not from 0 to 1000000"), ("x", "'x' is not a whole number"),
     ("1.5", "'1.5' is not a whole number"), ("1000001", "1000001 is not from 0 to 1000000")],
)  # fmt: skip
@pytest.mark.parametrize("command", [["search", "path:日記/"], ["tags", TAG]])
def test_the_cli_refuses_a_bad_offset_in_one_line(
    command: list[str], value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*command, "--offset", value])
    assert done.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: --offset: {says}" and len(err) == 2


def test_the_cli_refuses_an_offset_for_a_search_with_words(
    cli_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "記録 path:日記/", "--offset", "5", "--mode", "keyword"]) == 2
    assert "--offset pages a listing of operators alone" in capsys.readouterr().err


@pytest.fixture(scope="module")
def mcp(store: str) -> Iterator[McpClient]:
    with stdio_session(server_env(store)) as client:
        yield client


@pytest.mark.parametrize(
    ("tool", "arguments", "every"),
    [("search_docs", {"query": "path:日記/"}, [*sorted(NEWER, reverse=True), *sorted(SAME_DAY)]),
     ("tagged_docs", {"tag": TAG}, sorted(SAME_DAY))],
)  # fmt: skip
def test_mcp_pages_through_a_listing_by_next_offset(
    mcp: McpClient, tool: str, arguments: dict[str, Any], every: list[str]
) -> None:
    def page(offset: int) -> tuple[int, list[str], int | None]:
        out = json_of(mcp.call(tool, {**arguments, "limit": 5, "offset": offset}))
        assert out["offset"] == offset
        return out["total"], [n["path"] for n in out["notes"]], out["next_offset"]

    assert _walk(page) == (len(every), every)
    past = json_of(mcp.call(tool, {**arguments, "offset": 500}))
    assert (past["total"], past["notes"], past["next_offset"]) == (len(every), [], None)
    schema = mcp.list_tools()[tool].input_schema["properties"]["offset"]
    assert (schema["minimum"], schema["maximum"], schema["default"]) == (0, MAX_OFFSET, 0)
    assert "next_offset" in schema["description"]


@pytest.mark.parametrize(
    ("value", "shown"), [(-1, "-1"), ("5", '"5"'), (1.5, "1.5"), (MAX_OFFSET + 1, "1000001")]
)
@pytest.mark.parametrize(("tool", "arguments"), [("search_docs", {"query": "path:日記/"}),
                                                 ("tagged_docs", {"tag": TAG})])  # fmt: skip
def test_mcp_refuses_a_bad_offset_in_one_line(
    mcp: McpClient, tool: str, arguments: dict[str, Any], value: Any, shown: str
) -> None:
    result = mcp.call(tool, {**arguments, "offset": value})
    assert result.is_error and "\n" not in text_of(result)
    assert text_of(result).endswith(
        f"bad argument 'offset' for {tool}: {shown} is not a whole number from 0 to {MAX_OFFSET}"
    )


def test_mcp_refuses_an_offset_for_a_search_with_words(mcp: McpClient) -> None:
    result = mcp.call("search_docs", {"query": "記録", "mode": "keyword", "offset": 5})
    assert result.is_error and "offset pages a listing of operators alone" in text_of(result)


@pytest.fixture(scope="module")
def api(store: str) -> Iterator[httpx.Client]:
    with api_client(store, Asker(LLMSettings())) as client:
        yield client


def test_the_api_pages_through_a_listing(api: httpx.Client) -> None:
    def page(offset: int) -> tuple[int, list[str], int | None]:
        body = {"query": "path:日記/", "limit": 5, "offset": offset}
        out = api.post("/api/search/notes", json=body).json()
        paths = [n["id"] for n in out["data"]]
        return out["total"], paths, next_offset(offset, len(paths), out["total"])

    every = [*sorted(NEWER, reverse=True), *sorted(SAME_DAY)]
    assert _walk(page) == (len(every), every)
    past = api.post("/api/search/notes", json={"query": "path:日記/", "offset": 500}).json()
    assert (past["total"], past["data"]) == (len(every), [])


@pytest.mark.parametrize("offset", [-1, "x", 1.5, MAX_OFFSET + 1])
def test_the_api_refuses_a_bad_offset(api: httpx.Client, offset: Any) -> None:
    response = api.post("/api/search/notes", json={"query": "path:日記/", "offset": offset})
    assert response.status_code == 422
    tagged = api.get(f"/api/tags/{TAG}/notes", params={"offset": offset})
    assert tagged.status_code == 422
