"""Past answers opened again through the HTTP API (``GET /api/ai/qa/history/{id}``): shown as
first given, without a new LLM call, continuing their conversation; entries recorded before the
history kept metadata and warnings still open."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from psycopg.types.json import Jsonb

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.fakes.llm_server import FakeLLMServer
from tests.test_search import DIARY

QUESTION = "夜に何のラーメンを作った？"


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def client(vault_url: str, usem3: Embedder, llm: FakeLLMServer) -> Iterator[httpx.Client]:
    settings = LLMSettings(provider="anthropic", model="claude-test", base_url=llm.anthropic_base_url, api_key=llm.api_key)  # fmt: skip
    with api_server(vault_url, Asker(settings, embedder=usem3)) as url:
        with httpx.Client(base_url=url, timeout=60) as c:
            yield c


def made_up_citation_reply() -> str:
    """The model's answer citing the diary and a note it was never given (dropped, warned of)."""
    sources = [{"noteId": DIARY, "relevance": "high"}, {"noteId": "invented.md"}]
    return json.dumps({"answer": "味噌ラーメンです", "confidence": "high", "sources": sources})


def test_a_past_answer_opens_as_it_was_given_without_asking_the_model(
    client: httpx.Client, llm: FakeLLMServer
) -> None:
    llm.reply(made_up_citation_reply())
    fresh = client.post("/api/ai/qa", json={"question": QUESTION}).json()["data"]
    assert fresh["warnings"] and fresh["sources"][0]["note"]["title"] == "2026年1月10日の日記"
    calls = len(llm.log)
    response = client.get(f"/api/ai/qa/history/{fresh['id']}")
    assert response.status_code == 200, response.text
    reopened = response.json()["data"]
    assert len(llm.log) == calls  # no new LLM call
    for key in ("id", "conversationId", "question", "answer", "sources", "confidence", "warnings", "metadata"):  # fmt: skip
        assert reopened[key] == fresh[key], key
    assert reopened["metadata"]["retrievedNotes"] >= 1 and reopened["createdAt"]
    listed = client.get("/api/ai/qa/history", params={"limit": 1}).json()["data"][0]
    assert listed["id"] == fresh["id"]


def test_a_question_after_reopening_follows_up_its_conversation(
    client: httpx.Client, llm: FakeLLMServer
) -> None:
    first = client.post("/api/ai/qa", json={"question": QUESTION}).json()["data"]
    reopened = client.get(f"/api/ai/qa/history/{first['id']}").json()["data"]
    body = {"question": "それは何時ごろ？", "conversationId": reopened["conversationId"]}
    follow = client.post("/api/ai/qa", json=body).json()["data"]
    assert follow["conversationId"] == first["conversationId"]
    sent = llm.log[-1].body["messages"]
    assert sent[0]["content"] == QUESTION and sent[1]["content"] == first["answer"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_follow_up_to_a_conversation_not_in_the_history_is_refused(
    client: httpx.Client, llm: FakeLLMServer, stream: bool
) -> None:
    """As ``ask --conversation`` refuses it: answered as a new conversation, the follow-up
    silently lost the context it was asked in."""
    calls = len(llm.log)
    body = {"question": "それは何時ごろ？", "conversationId": str(uuid.uuid4()), "options": {"stream": stream}}  # fmt: skip
    response = client.post("/api/ai/qa", json=body)
    assert response.status_code == 404, response.text
    reason = response.json()["error"]
    assert f"no conversation {body['conversationId']} in the Q&A history" in reason
    assert "ask without conversationId to start a new conversation" in reason
    assert "\n" not in reason and len(llm.log) == calls  # no model asked


@pytest.mark.parametrize("entry_id", [str(uuid.UUID(int=1)), "nope", "%00"])
def test_an_answer_not_in_the_history_is_404(client: httpx.Client, entry_id: str) -> None:
    response = client.get(f"/api/ai/qa/history/{entry_id}")
    assert response.status_code == 404
    assert "in the Q&A history" in response.json()["detail"]


def test_an_answer_recorded_before_the_history_kept_metadata_still_opens(
    client: httpx.Client, vault_url: str
) -> None:
    old, cited = str(uuid.uuid4()), [{"noteId": DIARY, "noteTitle": "日記", "relevance": "high"}]
    with psycopg.connect(vault_url, autocommit=True) as conn:  # as 008's columns alone held it
        conn.execute(
            "INSERT INTO qa.history (id, conversation_id, question, answer, sources, confidence,"
            " model, tokens_used, response_ms) VALUES (%s, %s, '何を作った？', '味噌ラーメン。',"
            " %s, 'medium', 'claude-old', 42, 812.5)",
            (old, str(uuid.uuid4()), Jsonb(cited)),
        )
    data = client.get(f"/api/ai/qa/history/{old}").json()["data"]
    assert data["metadata"] == {"model": "claude-old", "tokensUsed": 42, "responseTime": 812.5}
    assert data["warnings"] == [] and data["confidence"] == "medium"
    assert data["sources"] == [cited[0] | {"source": None, "heading": None, "note": {"title": "2026年1月10日の日記", "tags": ["日記"], "url": "/notes/%E6%97%A5%E8%A8%98/2026-01-10.md"}}]  # fmt: skip


def test_the_openapi_docs_list_the_history_entry(client: httpx.Client) -> None:
    route = client.get("/openapi.json").json()["paths"]["/api/ai/qa/history/{entry_id}"]
    assert route["get"]["summary"] == "One past answer, to show it again"
