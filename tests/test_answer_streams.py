"""A streamed LLM answer that stops before the model finished, through the real ``anthropic`` and
``openai`` SDKs against a loopback server: the connection closed without the provider's end
event, broken in the middle of the body, or after the provider's error event. Either way the
user is told the answer broke off, and nothing half-written is shown as an answer, cited or kept
in the history."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMError, LLMSettings
from knowledge_assets.answer.llm import LLMClient
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.fakes.llm_server import FakeLLMServer
from tests.test_api import _streamed

CUTS = ["closed", "broken", "error"]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


def _settings(server: FakeLLMServer, provider: str) -> LLMSettings:
    url = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
    return LLMSettings(provider=provider, model="test-model", base_url=url, api_key=server.api_key)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize("how", CUTS)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_answer_cut_off_mid_stream_is_an_error_not_an_answer(
    vault_url: str, usem3: Embedder, server: FakeLLMServer, provider: str, how: str
) -> None:
    settings = _settings(server, provider)
    asker = Asker(settings, client=LLMClient(settings, sleep=lambda _: None), embedder=usem3)
    server.cut(after=2, how=how)
    kinds = []
    with db.connect(vault_url) as conn, pytest.raises(LLMError) as caught:
        for event in asker.events(conn, "味噌ラーメンを作ったのはいつ？"):
            kinds.append(event.kind)
    message = str(caught.value)
    assert "broke off before the model finished" in message and "ask again" in message, message
    assert f"{provider} model test-model" in message and server.api_key not in message
    if how == "error":  # the provider's reason, not the 200 the stream had opened with
        assert "Overloaded" in message and "HTTP 200" not in message, message
    # Text had reached the user, and no answer is made of it.
    assert "delta" in kinds and "done" not in kinds
    assert len(server.log) == 1  # once text has been shown, a broken stream is not restarted


@pytest.mark.parametrize("how", CUTS)
def test_the_api_ends_a_cut_off_answer_with_an_error_event_and_keeps_nothing(
    vault_url: str, usem3: Embedder, server: FakeLLMServer, how: str
) -> None:
    server.cut(after=2, how=how)
    with psycopg.connect(vault_url) as conn:
        kept = conn.execute("SELECT count(*) FROM qa.history").fetchone()
    with (
        api_server(vault_url, Asker(_settings(server, "anthropic"), embedder=usem3)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        events = _streamed(client, "夜に何のラーメンを作った？")
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "retrieved" and "delta" in kinds and kinds[-1] == "error", kinds
    error = events[-1][1]["error"]
    assert "broke off before the model finished" in error and "failed on this request" not in error
    with psycopg.connect(vault_url) as conn:
        assert conn.execute("SELECT count(*) FROM qa.history").fetchone() == kept


def test_the_cli_puts_the_error_of_a_cut_off_answer_on_a_line_of_its_own(
    vault_url: str,
    server: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from knowledge_assets.cli import main

    for name, value in {"DATABASE_URL": vault_url, "KA_LLM_PROVIDER": "anthropic", "KA_LLM_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": server.api_key}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    server.cut(after=2, how="broken")
    assert main(["ask", "夜に何のラーメンを作った？"]) == 2
    out, err = capsys.readouterr()
    assert out.endswith("\n") and err.startswith("error: anthropic model"), (out, err)
    assert "broke off before the model finished" in err and "unexpected failure" not in err


@pytest.mark.parametrize("reply", ["", json.dumps({"answer": "", "sources": []})])
def test_the_cli_shows_the_answer_of_a_model_that_said_nothing(
    vault_url: str, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], reply: str,
) -> None:  # fmt: skip
    """The answer was 情報が見つかりませんでした in --json and the history, and a blank line in
    the terminal: only the streamed pieces were printed, and there were none."""
    from knowledge_assets.answer.prompt import NOT_FOUND
    from knowledge_assets.cli import main

    for name, value in {"DATABASE_URL": vault_url, "KA_LLM_PROVIDER": "openai", "KA_LLM_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": server.api_key}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    server.reply(reply)
    assert main(["ask", "--no-save", "夜に何のラーメンを作った？"]) == 0
    assert capsys.readouterr().out.startswith(NOT_FOUND)


def test_a_streamed_answer_with_escaped_astral_characters_is_shown_and_kept_whole(
    vault_url: str, usem3: Embedder, server: FakeLLMServer
) -> None:
    """A model that escapes 𠮷 or 😀 as a surrogate pair, its halves in two chunks: the stream
    sent the first half alone, which could not be encoded, and the answer stopped there."""
    server.reply(json.dumps({"answer": "𠮷野家で味噌ラーメンを食べた😀", "sources": [], "confidence": "high"}))  # fmt: skip
    with (
        api_server(vault_url, Asker(_settings(server, "openai"), embedder=usem3)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        events = _streamed(client, "夜に何のラーメンを作った？")
        assert [kind for kind, _ in events][-1] == "done", events[-1]
        done = events[-1][1]
        kept = client.get(f"/api/ai/qa/history/{done['id']}").json()["data"]
    assert "".join(d["text"] for k, d in events if k == "delta") == done["answer"]
    assert done["answer"] == "𠮷野家で味噌ラーメンを食べた😀" == kept["answer"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_reader_who_stops_a_streamed_answer_stops_the_model_too(
    vault_url: str, usem3: Embedder, provider: str
) -> None:
    """The page's stop button closes the answer's connection: the API then closes its own
    connection to the provider, so a model that would go on for a minute is not paid for, and
    nothing is kept in the history."""
    long_answer = json.dumps({"answer": "味噌ラーメンです。" * 100, "sources": [], "confidence": "high"}, ensure_ascii=False)  # fmt: skip
    with psycopg.connect(vault_url) as conn:
        kept = conn.execute("SELECT count(*) FROM qa.history").fetchone()
    with FakeLLMServer(pace_s=0.1) as llm:  # some 130 pieces: 13 s if nobody stops it
        llm.reply(long_answer)
        with api_server(vault_url, Asker(_settings(llm, provider), embedder=usem3)) as url:
            with (
                httpx.Client(base_url=url, timeout=30) as client,
                client.stream(
                    "POST",
                    "/api/ai/qa",
                    json={"question": "夜に何を作った？", "options": {"stream": True}},
                ) as response,
            ):
                assert any(line == "event: delta" for line in response.iter_lines())
            deadline = time.monotonic() + 5
            while not llm.abandoned and time.monotonic() < deadline:
                time.sleep(0.05)
    assert llm.abandoned and llm.abandoned[0] < 20, llm.abandoned
    with psycopg.connect(vault_url) as conn:
        assert conn.execute("SELECT count(*) FROM qa.history").fetchone() == kept
