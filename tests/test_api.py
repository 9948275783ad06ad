"""The HTTP API through a real uvicorn server: search, Q&A (JSON and SSE), similar notes,
history, notes and tags, the bearer token, and the two database roles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.api import ApiConfigError, ApiSettings
from knowledge_assets.api.settings import writer_url
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import search
from knowledge_assets.core.search.fusion import HybridWeights
from knowledge_assets.mcp.reader import reader_url
from tests.api_support import api_server
from tests.conftest import GARDEN
from tests.fakes.llm_server import FakeLLMServer
from tests.test_search import DIARY, DRAFT, LATEST, notes_store


@pytest.fixture(scope="module")
def base(vault_url: str, usem3: Embedder) -> Iterator[str]:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3)) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=60) as c:
        yield c


def test_hybrid_search_takes_weights_and_reports_match_types(client: httpx.Client) -> None:
    body = client.post("/api/search/hybrid", json={"query": "味噌ラーメン", "limit": 5}).json()
    assert body["success"] and body["data"][0]["id"] == DIARY
    assert body["data"][0]["matchType"] in ("hybrid", "keyword") and body["data"][0]["title"]
    assert set(body["timing"]) == {"embedding", "search", "total"}
    vector_only = client.post("/api/search/hybrid", json={"query": "味噌ラーメン", "keywordWeight": 0, "vectorWeight": 1}).json()  # fmt: skip
    assert vector_only["data"][0]["score"] < body["data"][0]["score"]  # the keyword part is gone


@pytest.mark.parametrize(("path", "mode"), [("semantic", "vector"), ("keyword", "keyword")])
def test_semantic_and_keyword_search(client: httpx.Client, path: str, mode: str) -> None:
    body = client.post(f"/api/search/{path}", json={"query": "ラーメン", "filters": {"tags": ["日記"]}, **({"threshold": -1} if path == "semantic" else {})}).json()  # fmt: skip
    assert body["mode"] == mode and body["count"] >= 1
    assert all("日記" in hit["tags"] for hit in body["data"])


def _every_hit(client: httpx.Client, filters: dict[str, object]) -> set[str]:
    """The notes a semantic search of every passage keeps under ``filters``."""
    body = {"query": "メモ", "threshold": -1, "limit": 100, "filters": filters}
    response = client.post("/api/search/semantic", json=body)
    assert response.status_code == 200, response.text
    return {hit["id"] for hit in response.json()["data"]}


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ({"aliasPrefix": "jira:"}, {LATEST}),
        ({"contentTypes": ["project"]}, {GARDEN}),
        ({"topHeadings": ["nowhere"]}, set()),
        ({"types": ["bookmark_json"]}, set()),
        ({"updatedRange": {"from": "2026-01-01", "to": "2026-01-31"}}, {LATEST}),
        ({"dateRange": {"from": "2026-01-10", "to": "2026-01-10"}}, {DIARY}),
    ],
)
def test_the_api_filters_as_the_cli_and_mcp_do(
    client: httpx.Client, filters: dict[str, object], kept: set[str]
) -> None:
    assert {LATEST, GARDEN, DIARY} <= _every_hit(client, {})
    assert _every_hit(client, filters) == kept


def test_an_unknown_kind_of_document_is_refused(client: httpx.Client) -> None:
    body = {"query": "メモ", "filters": {"types": ["pdf"]}}
    assert client.post("/api/search/semantic", json=body).status_code == 422


def test_a_hit_says_what_it_is_where_it_sits_and_its_dates(client: httpx.Client) -> None:
    hit = client.post("/api/search/keyword", json={"query": "味噌ラーメン"}).json()["data"][0]
    assert hit["id"] == DIARY and hit["type"] == "markdown_note" and hit["url"] is None
    assert (hit["created"], hit["updated"]) == ("2026-01-10", None)
    assert hit["headingPath"][-2:] == [hit["parentHeading"], hit["heading"]]
    assert "contentType" in hit and "topHeading" in hit


def test_a_search_by_note_lists_distinct_notes_with_their_other_sections(
    server_url: str, tmp_path: Path
) -> None:
    """Six sections of one note match best: as passages they fill the list, by note the other
    notes are there too and the long note's other sections come with its best one."""
    long = "# 梅雨の記録\n\n" + "".join(f"## 第{i}週\n\n梅雨。梅雨の雨。\n\n" for i in range(1, 7))
    notes = {
        "long.md": long,
        "a.md": "# 旅\n\n旅先は梅雨だったが、それ以外の話が長く続いた一日の記録。\n",
        "b.md": "# 庭\n\n庭の紫陽花は梅雨に咲くが、今日は手入れの話ばかりを書いた。\n",
    }
    with (
        notes_store(server_url, tmp_path, notes) as url,
        api_server(url, Asker(LLMSettings())) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        passages = client.post("/api/search/keyword", json={"query": "梅雨", "limit": 3}).json()
        by_note = client.post(
            "/api/search/keyword",
            json={"query": "梅雨", "limit": 3, "perNote": True, "sections": 5},
        ).json()
    assert [h["id"] for h in passages["data"]] == ["long.md"] * 3
    assert "sections" not in passages["data"][0]
    assert sorted(h["id"] for h in by_note["data"]) == ["a.md", "b.md", "long.md"]
    sections = next(h["sections"] for h in by_note["data"] if h["id"] == "long.md")
    assert len(sections) == 5 and {s["id"] for s in sections} == {"long.md"}
    assert len({s["heading"] for s in sections}) == 5


def test_bad_requests_are_422_with_the_reason(client: httpx.Client) -> None:
    assert client.post("/api/search/hybrid", json={"query": ""}).status_code == 422
    operators_alone = client.post("/api/search/keyword", json={"query": "tag:日記"})
    assert operators_alone.status_code == 422
    assert "no words to search for" in operators_alone.json()["error"]
    response = client.post("/api/ai/qa", json={"question": "x", "conversationId": "nope"})
    assert response.status_code == 422 and "conversation id" in response.text


def test_status_reports_the_sources_coverage_and_problems(client: httpx.Client) -> None:
    data = client.get("/api/status").json()["data"]
    assert data["problems"] == 0 and data["rejected"] == [] and data["failed"] == []
    assert data["model"] == "usem3" and data["missing_vectors"] == 0
    assert data["searchable"] >= 6 and data["passages"] > data["searchable"]
    assert [s["name"] for s in data["sources"]] == ["local"]
    assert data["counts"] == {"rejected": 0, "warnings": 0, "failed": 0}


def test_qa_answers_with_citations_and_records_the_history(client: httpx.Client) -> None:
    body = client.post("/api/ai/qa", json={"question": "夜に何のラーメンを作った？"}).json()
    data = body["data"]
    assert "味噌ラーメン" in data["answer"]
    assert data["sources"][0]["noteId"] == DIARY
    assert data["sources"][0]["note"]["url"] == f"/notes/{quote(DIARY)}"
    meta = data["metadata"]
    assert (
        meta["model"] == "extractive" and meta["retrievedNotes"] >= 1 and meta["responseTime"] > 0
    )
    follow = client.post("/api/ai/qa", json={"question": "量子色力学のxyzzy", "conversationId": data["conversationId"]}).json()  # fmt: skip
    assert follow["data"]["answer"] == "情報が見つかりませんでした"
    page = client.get("/api/ai/qa/history", params={"limit": 1}).json()
    assert page["total"] >= 2 and page["count"] == 1
    assert page["data"][0]["question"] == "量子色力学のxyzzy"
    older = client.get("/api/ai/qa/history", params={"limit": 1, "offset": 1}).json()
    assert older["data"][0]["sources"] == [DIARY]


def _streamed(client: httpx.Client, question: str) -> list[tuple[str, Any]]:
    """The server-sent events of a streamed answer, as (kind, data) pairs."""
    events = []
    with client.stream("POST", "/api/ai/qa", json={"question": question, "options": {"stream": True}}) as response:  # fmt: skip
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((kind or "", json.loads(line.split(":", 1)[1])))
    return events


def test_qa_streams_server_sent_events(client: httpx.Client) -> None:
    events = _streamed(client, "夜に何のラーメンを作った？")
    kinds = [k for k, _ in events]
    assert kinds[0] == "retrieved" and kinds[-2:] == ["sources", "done"] and "delta" in kinds
    done = events[-1][1]
    assert "".join(d["text"] for k, d in events if k == "delta") == done["answer"]
    assert done["sources"][0]["noteId"] == DIARY
    assert events[-2][1] == done["sources"]  # the sources event lists what the answer cites


def test_a_streamed_answer_citing_nothing_says_so_in_every_event(client: httpx.Client) -> None:
    """A question nothing answers: the sources event lists what the answer cites, none."""
    events = dict(_streamed(client, "量子色力学のxyzzy"))
    assert events["done"]["answer"] == "情報が見つかりませんでした"
    assert "retrieved" in events and events["sources"] == [] == events["done"]["sources"]


def test_an_answer_that_found_nothing_names_the_notes_search_found(client: httpx.Client) -> None:
    """A question no sentence answers (the garden note is in English) still names the note search
    found, with its address, streamed or not and reopened from the history; an answer that
    cites its note names none."""
    garden = "projects/garden.md"
    done = dict(_streamed(client, "庭に何を植える？"))["done"]
    assert done["answer"] == "情報が見つかりませんでした" and done["sources"] == []
    related = done["relatedNotes"]
    assert [(n["noteId"], n["source"]) for n in related] == [(garden, "local")]
    assert related[0]["note"]["url"] == f"/notes/{garden}"
    assert related[0]["note"]["title"] == "Vegetable garden plan"
    kept = client.get(f"/api/ai/qa/history/{done['id']}").json()["data"]
    assert kept["relatedNotes"] == related
    plain = client.post("/api/ai/qa", json={"question": "庭に何を植える？"}).json()["data"]
    assert plain["relatedNotes"] == related
    ramen = {"question": "夜に何のラーメンを作った？"}
    cited = client.post("/api/ai/qa", json=ramen).json()["data"]
    assert cited["sources"] and cited["relatedNotes"] == []


def test_similar_notes_have_a_200_character_preview(client: httpx.Client) -> None:
    body = client.get(f"/api/ai/similar/{quote(LATEST)}", params={"limit": 3}).json()
    assert body["count"] == 3 and DRAFT not in [n["id"] for n in body["data"]]
    assert all(0 < len(n["preview"]) <= 200 for n in body["data"])
    assert client.get("/api/ai/similar/nowhere.md").status_code == 404


def test_notes_and_tags_serve_current_notes_only(client: httpx.Client) -> None:
    note = client.get(f"/api/notes/{quote(DIARY)}").json()["data"]
    assert note["id"] == DIARY and "味噌ラーメン" in note["content"]
    assert note["fileRejected"] is None  # the file on disk is the version served
    assert client.get("/api/notes/projects/reading-list.md").status_code == 404  # a draft
    assert note["properties"] == []  # title, tags and created are shown apart
    latest = client.get(f"/api/notes/{quote(LATEST)}").json()["data"]
    assert latest["properties"] == [
        {"name": "previous", "value": DRAFT},
        {"name": "version", "value": "2"},
    ]
    # the version LATEST replaces through `previous` is served as history, pointing at it
    assert latest["versions"] == [{"id": DRAFT, "title": "RAG設計メモ（初版）"}]
    assert latest["supersededBy"] is None
    older = client.get(f"/api/notes/{DRAFT}").json()["data"]
    assert (older["supersededBy"], older["versions"]) == (LATEST, [])
    assert "固定長 512 文字" in older["content"]
    tags = client.get("/api/tags").json()["data"]
    assert {"tag": "日記", "count": 2} in tags


def test_an_empty_note_is_served_and_says_it_is_empty(client: httpx.Client, vault_url: str) -> None:
    """A note of frontmatter alone is not searched, but reading it by path works (as `get`)."""
    from knowledge_assets.core.database import db
    from knowledge_assets.core.ingest import store
    from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document

    doc = parse_document("栞/空.md", "---\ntitle: 空の栞\ntags: [栞]\n---\n".encode())
    assert isinstance(doc, ParsedDoc)
    with db.connect(vault_url) as conn:
        store.upsert_docs(conn, "docs_local", [(doc, "v1")])
    response = client.get(f"/api/notes/{quote('栞/空.md')}")
    assert response.status_code == 200, response.text
    note = response.json()["data"]
    assert note["title"] == "空の栞" and note["empty"] is True and note["content"] == ""
    assert client.get(f"/api/notes/{quote(DIARY)}").json()["data"]["empty"] is False


def test_the_page_and_the_openapi_docs_are_served(client: httpx.Client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "ノート検索" in page.text
    assert client.get(f"/notes/{quote(DIARY)}").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/search/semantic",
        "/api/search/hybrid",
        "/api/ai/qa",
        "/api/ai/qa/history",
        "/api/tags",
    ):
        assert path in paths


def test_a_token_is_required_when_one_is_set(vault_url: str, usem3: Embedder) -> None:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3), token="s3cret-token") as url:
        assert httpx.get(f"{url}/api/tags").status_code == 401
        assert (
            httpx.get(f"{url}/api/tags", headers={"Authorization": "Bearer wrong"}).status_code
            == 401
        )
        ok = httpx.get(f"{url}/api/tags", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200
        assert httpx.get(f"{url}/").status_code == 200  # the page itself; it sends the token


def test_binding_beyond_loopback_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_API_TOKEN", raising=False)
    with pytest.raises(ApiConfigError, match="KA_API_TOKEN"):
        ApiSettings.resolve("0.0.0.0", 8000)
    assert not ApiSettings("127.0.0.1").needs_token and ApiSettings("::1").needs_token is False


def test_roles_read_only_and_history_only(vault_url: str) -> None:
    with psycopg.connect(reader_url(vault_url)) as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):  # fmt: skip
        conn.execute("DELETE FROM qa.history")
    with psycopg.connect(writer_url(vault_url)) as conn:
        conn.execute("SELECT count(*) FROM qa.history")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM rag.chunks")
    with psycopg.connect(writer_url(vault_url)) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):  # fmt: skip
        conn.execute("DELETE FROM qa.history")


def test_qa_with_an_llm_drops_a_made_up_citation(vault_url: str, usem3: Embedder) -> None:
    with FakeLLMServer() as llm:
        settings = LLMSettings(provider="anthropic", model="claude-test", base_url=llm.anthropic_base_url, api_key=llm.api_key)  # fmt: skip
        llm.reply(json.dumps({"answer": "味噌ラーメンです", "confidence": "high", "sources": [{"noteId": DIARY}, {"noteId": "invented.md"}]}))  # fmt: skip
        with api_server(vault_url, Asker(settings, embedder=usem3)) as url:
            data = httpx.post(f"{url}/api/ai/qa", json={"question": "夜に何を作った？"}, timeout=60).json()["data"]  # fmt: skip
    assert [s["noteId"] for s in data["sources"]] == [DIARY]
    assert data["droppedSources"][0]["noteId"] == "invented.md"
    assert data["metadata"]["model"] == "claude-test" and data["metadata"]["tokensUsed"] > 0


def test_hybrid_search_without_weights_uses_the_active_models_fusion(
    client: httpx.Client, vault_url: str, usem3: Embedder
) -> None:

    body = client.post("/api/search/hybrid", json={"query": "ラーメン 設計", "limit": 5}).json()
    with psycopg.connect(vault_url) as conn:
        hits = search(conn, "ラーメン 設計", mode="hybrid", limit=5, embedder=usem3).hits
    assert [d["score"] for d in body["data"]] == [round(h.score, 4) for h in hits]


def test_a_hybrid_search_given_one_weight_keeps_the_active_models_fusion_for_the_rest(
    client: httpx.Client, vault_url: str, usem3: Embedder
) -> None:
    """keywordWeight alone: usem3's measured method (rerank) and vector weight (0.5) stay; the
    defaults of no model (minmax, 1.0) would rank differently."""
    query = "ラーメン 設計"
    body = client.post("/api/search/hybrid", json={"query": query, "limit": 5, "keywordWeight": 0.7}).json()  # fmt: skip
    weights = replace(HybridWeights.from_env("usem3"), keyword=0.7)
    assert (weights.method, weights.vector) == ("rerank", 0.5)
    with psycopg.connect(vault_url) as conn:
        hits = search(conn, query, mode="hybrid", limit=5, embedder=usem3, weights=weights).hits
        untuned = search(conn, query, mode="hybrid", limit=5, embedder=usem3, weights=HybridWeights(keyword=0.7)).hits  # fmt: skip
    assert [d["score"] for d in body["data"]] == [round(h.score, 4) for h in hits]
    assert [round(h.score, 4) for h in untuned] != [round(h.score, 4) for h in hits]


SEARCHES = ("/api/search/semantic", "/api/search/hybrid", "/api/search/keyword")
# Request bodies the API cannot serve, each with the field and the words its 422 names. They are
# raw JSON text: Python's parser (and so the server) takes NaN, Infinity and lone "\ud800"s.
# fmt: off
BAD_BODIES = [
    ("/api/ai/qa", '{"question":"   "}', "question", "the question is empty"),
    ("/api/ai/qa", '{"question":" ","options":{"stream":true}}', "question", "the question is empty"),
    *[(path, '{"query":"\\ud800"}', "query", "lone surrogate") for path in SEARCHES],
    ("/api/search/keyword", '{"query":"x","filters":{"tags":["\\udc00"]}}', "tags", "lone surrogate"),
    ("/api/ai/qa", '{"question":"x","conversationId":"\\ud800"}', "conversationId", "lone surrogate"),
    ("/api/search/keyword", '{"query":"x","filters":{"dateRange":{"from":"\\udc00"}}}', "from", "valid string"),
    ("/api/ai/qa", '{"question":"a\\u0000b"}', "question", "NUL character"),
    ("/api/search/keyword", '{"query":"a\\u0000b"}', "query", "NUL character"),
    ("/api/search/hybrid", '{"query":"x","filters":{"pathPrefix":"a\\u0000"}}', "pathPrefix", "NUL character"),
    ("/api/search/hybrid", '{"query":"x","vectorWeight":NaN}', "vectorWeight", "finite number"),
    ("/api/search/hybrid", '{"query":"x","vectorWeight":Infinity}', "vectorWeight", "finite number"),
    ("/api/search/hybrid", '{"query":"x","keywordWeight":-Infinity}', "keywordWeight", "finite number"),
    ("/api/search/semantic", '{"query":"x","threshold":NaN}', "threshold", "finite number"),
    ("/api/search/keyword", '{"query":"x","limit":1e400}', "limit", "finite number"),
    ("/api/ai/qa", '{"question":"x","options":{"topK":NaN}}', "topK", "finite number"),
    ("/api/search/hybrid", "[NaN]", "body", "valid dictionary"),
    # An unknown field was ignored and the search ran unfiltered, as if it had worked.
    ("/api/search/hybrid", '{"query":"x","filters":{"bogus":1}}', "bogus", "Extra inputs are not permitted"),
    ("/api/search/keyword", '{"query":"x","filters":{"dateRange":{"start":"2025-01-01"}}}', "start", "Extra inputs"),
    ("/api/ai/qa", '{"question":"x","options":{"top_k":3}}', "top_k", "Extra inputs are not permitted"),
]
# fmt: on


def _post_raw(client: httpx.Client, path: str, body: str) -> httpx.Response:
    return client.post(path, content=body.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize(("path", "body", "field", "problem"), BAD_BODIES)
def test_impossible_request_bodies_are_422_naming_the_field(
    client: httpx.Client, path: str, body: str, field: str, problem: str
) -> None:
    response = _post_raw(client, path, body)
    assert response.status_code == 422, response.text
    error = response.json()["detail"][0]
    assert field in error["loc"] and problem in error["msg"]


def test_the_422_echoes_what_json_cannot_carry_as_text(client: httpx.Client) -> None:
    nan = _post_raw(client, "/api/search/hybrid", '{"query":"x","vectorWeight":NaN}')
    assert nan.json()["detail"][0]["input"] == "NaN"
    surrogate = _post_raw(client, "/api/search/semantic", '{"query":"\\ud800"}')
    assert surrogate.json()["detail"][0]["input"] == "\\ud800"


@pytest.mark.parametrize("path", ["/api/notes/%00", "/api/ai/similar/%00"])
def test_a_path_with_a_nul_names_no_note(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and "no current note at" in response.json()["detail"]


def test_a_history_offset_past_bigint_is_422(client: httpx.Client) -> None:
    response = client.get("/api/ai/qa/history?offset=99999999999999999999")
    assert response.status_code == 422
    error = response.json()["detail"][0]
    assert error["loc"] == ["query", "offset"] and "less than or equal" in error["msg"]
