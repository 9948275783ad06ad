"""Answers on real Postgres over the sample vault: offline extractive answers, and LLM answers
through the real ``anthropic`` and ``openai`` SDKs against a loopback server speaking their wire
formats (streaming, 429 with Retry-After, 500, malformed JSON, a made-up citation), plus the
Q&A history and follow-up questions."""

from __future__ import annotations

import json
import re
import typing
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.answer import NOT_FOUND, Asker, LLMError, LLMSettings, Turn
from knowledge_assets.answer import history as qa_history
from knowledge_assets.answer.config import DEFAULT_MODELS, LLMConfigError
from knowledge_assets.answer.llm import LLMClient, length_field
from knowledge_assets.answer.parse import LEVELS
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from tests.fakes.llm_server import FakeLLMServer
from tests.test_search import DIARY, notes_store

PROVIDERS = ["anthropic", "openai"]


@pytest.fixture
def conn(vault_url: str) -> Iterator[psycopg.Connection]:
    with db.connect(vault_url) as c:
        yield c


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


@dataclass
class LLMCase:
    """One provider's SDK talking to the loopback server, asked over the sample vault."""

    conn: psycopg.Connection
    server: FakeLLMServer
    provider: str
    embedder: Embedder

    @property
    def base_url(self) -> str:
        anthropic = self.provider == "anthropic"
        return self.server.anthropic_base_url if anthropic else self.server.openai_base_url

    def asker(self, **kw: object) -> tuple[Asker, list[float]]:
        """An asker for this provider, and the list its client's retry waits go to."""
        settings = LLMSettings(provider=self.provider, model="test-model", base_url=self.base_url, api_key=self.server.api_key, **kw)  # type: ignore[arg-type]  # fmt: skip
        waits: list[float] = []
        client = LLMClient(settings, sleep=waits.append)
        return Asker(settings, client=client, embedder=self.embedder), waits


@pytest.fixture(params=PROVIDERS)
def llm(
    request: pytest.FixtureRequest, conn: psycopg.Connection, usem3: Embedder, server: FakeLLMServer
) -> LLMCase:
    """Each test that takes it runs once per provider (ids ``[anthropic]``, ``[openai]``)."""
    return LLMCase(conn, server, request.param, usem3)


def test_offline_answer_quotes_the_passage_and_cites_its_note(conn: psycopg.Connection, usem3: Embedder) -> None:  # fmt: skip
    result = Asker(LLMSettings(), embedder=usem3).ask(conn, "夜に何のラーメンを作った？")
    assert "> 夜は味噌ラーメンを作った。" in result.answer
    assert result.sources[0].note_id == DIARY
    assert result.metadata["model"] == "extractive"
    assert result.metadata["retrievedNotes"] >= 1 and result.metadata["responseTime"] > 0


def test_a_question_with_search_operators_is_answered_from_the_notes_they_keep(conn: psycopg.Connection, usem3: Embedder) -> None:  # fmt: skip
    asker = Asker(LLMSettings(), embedder=usem3)
    kept = asker.ask(conn, "tag:日記 夜に何のラーメンを作った？")
    assert "> 夜は味噌ラーメンを作った。" in kept.answer and kept.sources[0].note_id == DIARY
    elsewhere = asker.ask(conn, "path:projects/ 夜に何のラーメンを作った？")
    assert all(s.note_id.startswith("projects/") for s in elsewhere.sources)
    assert "味噌ラーメン" not in elsewhere.answer


def test_a_follow_up_asking_for_more_is_answered_about_the_earlier_question(
    server_url: str, tmp_path: Path
) -> None:
    """「もっと詳しく」 names no topic: it is answered from the earlier question's note, not from
    a note that happens to hold もっと and 詳しい (which it was, with high confidence)."""
    notes = {
        "diary.md": "# 日記\n\n夜は味噌ラーメンを作った。\n",
        "writing.md": "# 文章の練習\n\nもっと詳しく書くこと。詳しい説明はもっと後で足す。\n",
    }
    with notes_store(server_url, tmp_path, notes) as url, db.connect(url) as conn:
        asker = Asker(LLMSettings())
        first = asker.ask(conn, "夜に何のラーメンを作った？")
        assert first.sources[0].note_id == "diary.md"
        more = asker.ask(conn, "もっと詳しく", history=[Turn(first.question, first.answer)])
    assert [s.note_id for s in more.sources] == ["diary.md"], more.answer
    assert "味噌ラーメン" in more.answer


def test_a_citation_names_the_section_that_answers(server_url: str, tmp_path: Path) -> None:
    """A long note's answer is far down it: the citation carries the heading of the section
    that covers the question, so the page opens the note there."""
    body = "".join(f"## 第{i}段落\n\n関係のない話が続く。\n\n" for i in range(1, 27))
    notes = {"long.md": f"# 長いノート\n\n{body}## 第27段落\n\n北海道には梅雨がない。\n"}
    with notes_store(server_url, tmp_path, notes) as url, db.connect(url) as conn:
        result = Asker(LLMSettings()).ask(conn, "梅雨がないのはどこ？")
    assert [(s.note_id, s.heading) for s in result.sources] == [("long.md", "第27段落")]
    assert result.to_dict()["sources"][0]["heading"] == "第27段落"


def test_a_follow_up_with_search_operators_is_read_without_them(conn: psycopg.Connection, usem3: Embedder) -> None:  # fmt: skip
    asker = Asker(LLMSettings(), embedder=usem3)
    first = asker.ask(conn, "夜に何のラーメンを作った？")
    alone = asker.ask(conn, "それはいつ？")
    assert alone.question == "それはいつ？"
    # Found only with the earlier question: its words are what is answered, as for any other,
    # and the answer records the question as asked (the history shows what was asked).
    second = asker.ask(conn, "tag:日記 それはいつ？", history=[Turn(first.question, first.answer)])
    assert second.question == "tag:日記 それはいつ？"
    assert second.sources and second.sources[0].note_id == DIARY


def test_offline_answer_says_so_when_nothing_relevant_is_found(conn: psycopg.Connection, usem3: Embedder) -> None:  # fmt: skip
    result = Asker(LLMSettings(), embedder=usem3).ask(conn, "量子色力学のxyzzy定理とは")
    assert result.answer == NOT_FOUND
    assert result.sources == [] and result.confidence == "low"
    assert result.metadata["retrievedNotes"] == 0 and result.related == []  # nor did search


GARDEN = "projects/garden.md"


def test_an_answer_that_found_nothing_names_the_notes_search_found(conn: psycopg.Connection, usem3: Embedder) -> None:  # fmt: skip
    """The garden note is in English: search finds it by meaning, no sentence of it can be
    quoted for a Japanese question. The answer says nothing was found and names the note, which
    the history keeps with the answer."""
    result = Asker(LLMSettings(), embedder=usem3).ask(conn, "庭に何を植える？")
    assert result.answer == NOT_FOUND and result.sources == []
    assert [(s.note_id, s.source) for s in result.related] == [(GARDEN, "local")]
    assert result.related[0].title == "Vegetable garden plan"
    assert result.to_dict()["relatedNotes"][0]["noteId"] == GARDEN
    entry = qa_history.entry(conn, qa_history.record(conn, result, qa_history.new_conversation_id()))  # fmt: skip
    assert entry is not None
    assert [n["noteId"] for n in entry.answer_dict()["relatedNotes"]] == [GARDEN]
    # An answer that cites its note names no others.
    found = Asker(LLMSettings(), embedder=usem3).ask(conn, "夜に何のラーメンを作った？")
    assert found.sources and found.related == []


def test_notes_the_model_leaves_uncited_when_it_finds_nothing_are_named(llm: LLMCase) -> None:
    asker, _ = llm.asker()
    llm.server.reply(json.dumps({"answer": NOT_FOUND, "confidence": "low", "sources": []}, ensure_ascii=False))  # fmt: skip
    events = list(asker.events(llm.conn, "味噌ラーメンを作ったのはいつ？"))
    retrieved = [s.note_id for s in events[0].data]
    result = events[-1].data
    assert result.sources == [] and retrieved and DIARY in retrieved
    assert [s.note_id for s in result.related] == retrieved


def test_llm_answer_streams_and_cites_a_retrieved_note(llm: LLMCase) -> None:
    asker, _ = llm.asker()
    events = list(asker.events(llm.conn, "味噌ラーメンを作ったのはいつ？"))
    kinds = [e.kind for e in events]
    assert kinds[0] == "sources" and kinds[-1] == "done" and kinds.count("delta") > 3
    result = events[-1].data
    assert "".join(e.data for e in events if e.kind == "delta") == result.answer
    assert result.sources[0].note_id == DIARY and result.warnings == []
    assert result.metadata["model"] == "test-model" and result.metadata["tokensUsed"] > 0
    sent = llm.server.log[-1].body
    assert sent["stream"] is True and sent["model"] == "test-model"
    system = sent["system"] if llm.provider == "anthropic" else sent["messages"][0]["content"]
    assert system.startswith("あなたは個人ナレッジベースのアシスタントです。")
    assert f"noteId: {DIARY}" in json.dumps(sent["messages"], ensure_ascii=False)
    # Anthropic takes max_tokens; so does an OpenAI-compatible server (here on loopback).
    assert sent["max_tokens"] == 1024 and "max_completion_tokens" not in sent


@pytest.mark.parametrize(
    ("base_url", "field"),
    [
        (None, "max_completion_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://my-team.openai.azure.com/openai/v1", "max_completion_tokens"),
        ("http://127.0.0.1:11434/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
        ("https://api.openai.com.example.net/v1", "max_tokens"),
    ],
)
def test_the_answer_length_goes_in_the_field_the_endpoint_reads(
    base_url: str | None, field: str
) -> None:
    assert length_field(base_url) == field


def test_an_answer_cut_at_its_length_limit_says_so(llm: LLMCase) -> None:
    asker, _ = llm.asker(max_output_tokens=20)
    result = asker.ask(llm.conn, "味噌ラーメンを作ったのはいつ？")
    assert result.warnings[-1] == (
        "the answer stopped at its length limit of 20 tokens: raise KA_LLM_MAX_TOKENS for a"
        " whole answer"
    )
    whole, _ = llm.asker()
    assert not [w for w in whole.ask(llm.conn, "味噌ラーメンを作ったのはいつ？").warnings if "limit" in w]  # fmt: skip


def test_429_with_retry_after_and_500_are_retried(llm: LLMCase) -> None:
    asker, waits = llm.asker()
    llm.server.fail(429, retry_after="7")
    llm.server.fail(500)
    result = asker.ask(llm.conn, "味噌ラーメン")
    assert [entry.status for entry in llm.server.log] == [429, 500, 200]
    assert waits[0] == 7.0 and 0 < waits[1] <= 1.0  # Retry-After honoured, then backoff
    assert result.metadata["attempts"] == 3 and result.sources


def test_retries_are_bounded_and_the_error_never_shows_the_key(llm: LLMCase) -> None:
    asker, waits = llm.asker(max_retries=2, max_retry_after_s=5.0)
    llm.server.fail(429, times=5, retry_after="3600")
    with pytest.raises(LLMError) as caught:
        asker.ask(llm.conn, "味噌ラーメン")
    assert len(llm.server.log) == 3 and waits == [5.0, 5.0]  # a huge Retry-After is capped
    assert "HTTP 429" in str(caught.value) and "after 3 attempts" in str(caught.value)
    assert llm.server.api_key not in str(caught.value) and llm.server.api_key not in repr(
        asker.settings
    )


def test_a_wrong_key_fails_at_once_with_a_hint(llm: LLMCase) -> None:
    settings = LLMSettings(
        provider=llm.provider, model="m", base_url=llm.base_url, api_key="wrong-key"
    )
    with pytest.raises(LLMError, match="HTTP 401 \\(check the API key\\)"):
        Asker(settings, embedder=llm.embedder).ask(llm.conn, "味噌ラーメン")


@pytest.mark.parametrize("at", range(150, 200, 7))
def test_a_refused_key_echoed_near_the_cut_is_not_shown_in_part(llm: LLMCase, at: int) -> None:
    """The message was cut to 200 characters before the key was masked: a key straddling the
    cut showed its first characters, which neither its value nor its shape matched."""
    key = "myLocalProxyKey0123456789abcdef"
    llm.server.echo_key_at = at
    settings = LLMSettings(provider=llm.provider, model="m", base_url=llm.base_url, api_key=key)
    with pytest.raises(LLMError) as caught:
        Asker(settings, embedder=llm.embedder).ask(llm.conn, "味噌ラーメン")
    assert "HTTP 401" in str(caught.value) and key[:6] not in str(caught.value)


def test_a_web_page_at_the_base_url_is_named_as_the_wrong_address(llm: LLMCase) -> None:
    """A 200 that is no event stream gave no event: it was reported as an answer that broke
    off, "ask again", which it would do for ever."""
    asker, _ = llm.asker()
    llm.server.page = "<html><body>Sign in to the proxy</body></html>"
    with pytest.raises(LLMError) as caught:
        asker.ask(llm.conn, "味噌ラーメン")
    said = str(caught.value)
    assert "answered with text/html, not the model's answer stream" in said
    assert "check KA_LLM_BASE_URL" in said and "broke off" not in said


def test_malformed_json_from_the_model_still_gives_an_answer(llm: LLMCase) -> None:
    asker, _ = llm.asker()
    llm.server.reply(f'はい。\n```json\n{{"answer": "味噌ラーメンです", "sources": [{{"noteId": "{DIARY}",}}], "confidence": "high",}}\n```')  # fmt: skip
    result = asker.ask(llm.conn, "夜に何を作った？")
    assert result.answer == "味噌ラーメンです"
    assert [s.note_id for s in result.sources] == [DIARY]
    assert result.metadata["parsed"] == "repaired"
    llm.server.reply('{"answer": "味噌ラーメンを作った（2026年1月10日の日記）", "sources": [')
    truncated = asker.ask(llm.conn, "夜に何を作った？")
    assert truncated.answer.startswith("味噌ラーメンを作った")
    assert truncated.metadata["parsed"] == "answer-field"


def test_a_made_up_citation_is_dropped_and_flagged(llm: LLMCase) -> None:
    asker, _ = llm.asker()
    reply = {"answer": "味噌ラーメンです", "confidence": "high", "sources": [
        {"noteId": DIARY, "noteTitle": "日記", "relevance": "高"},
        {"noteId": "notes/invented.md", "noteTitle": "存在しないノート", "relevance": "高"}]}  # fmt: skip
    llm.server.reply(json.dumps(reply, ensure_ascii=False))
    result = asker.ask(llm.conn, "夜に何を作った？")
    assert [s.note_id for s in result.sources] == [DIARY]
    assert result.dropped_sources[0]["noteId"] == "notes/invented.md"
    assert any("notes/invented.md" in w for w in result.warnings)
    assert result.confidence != "high"  # a made-up citation costs confidence


def test_an_answer_that_cites_nothing_or_strays_from_its_notes_is_flagged(llm: LLMCase) -> None:
    """Seed 001's checks: each costs a level of confidence and says why, in the warnings."""
    asker, _ = llm.asker()
    grounded = {"answer": "夜は味噌ラーメンを作った", "confidence": "high", "sources": [
        {"noteId": DIARY, "noteTitle": "日記", "relevance": "高"}]}  # fmt: skip
    llm.server.reply(json.dumps(grounded, ensure_ascii=False))
    kept = asker.ask(llm.conn, "夜に何を作った？")
    assert not [w for w in kept.warnings if "cites no note" in w or "stray" in w]
    for reply, warned in [
        ({**grounded, "sources": []}, "the answer cites no note"),
        ({**grounded, "answer": "量子力学の基礎方程式はシュレディンガー方程式です"}, "may stray"),
    ]:
        llm.server.reply(json.dumps(reply, ensure_ascii=False))
        flagged = asker.ask(llm.conn, "夜に何を作った？")
        assert any(warned in w for w in flagged.warnings), flagged.warnings
        assert LEVELS.index(flagged.confidence) < LEVELS.index(kept.confidence)


def test_follow_up_sends_earlier_turns_and_history_lists_them(
    conn: psycopg.Connection,
    usem3: Embedder,
    server: FakeLLMServer,
) -> None:
    asker, _ = LLMCase(conn, server, "openai", usem3).asker()
    conversation = qa_history.new_conversation_id()
    first = asker.ask(conn, "夜に何のラーメンを作った？")
    qa_history.record(conn, first, conversation)
    earlier = qa_history.turns(conn, conversation)
    assert earlier == [Turn(first.question, first.answer)]
    second = asker.ask(conn, "それはいつ？", history=earlier)
    qa_history.record(conn, second, conversation)
    roles = [m["role"] for m in server.log[-1].body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert server.log[-1].body["messages"][1]["content"] == first.question
    total, page = qa_history.listing(conn, limit=1, offset=0)
    assert total >= 2 and page[0].question == "それはいつ？"
    assert page[0].to_dict()["sources"] == [s.note_id for s in second.sources]
    _, older = qa_history.listing(conn, limit=1, offset=1)
    assert older[0].question == first.question


def test_a_retiring_anthropic_model_warns_in_the_answer_and_the_default_is_current(
    conn: psycopg.Connection, usem3: Embedder, server: FakeLLMServer
) -> None:
    from anthropic.resources.messages import DEPRECATED_MODELS
    from anthropic.types import ModelParam

    known = typing.get_args(typing.get_args(ModelParam)[0])
    assert DEFAULT_MODELS["anthropic"] in known
    assert DEFAULT_MODELS["anthropic"] not in DEPRECATED_MODELS
    if not DEPRECATED_MODELS:
        pytest.skip("the installed anthropic SDK lists no retiring model")
    retiring, date = next(iter(DEPRECATED_MODELS.items()))
    settings = LLMSettings(provider="anthropic", model=retiring, base_url=server.anthropic_base_url, api_key=server.api_key)  # fmt: skip
    question = "味噌ラーメンを作ったのはいつ？"
    with warnings.catch_warnings():  # the SDK's own DeprecationWarning, which no CLI shows
        warnings.simplefilter("ignore", DeprecationWarning)
        old = Asker(settings, embedder=usem3).ask(conn, question)
    notice = [w for w in old.warnings if "retires" in w]
    assert notice == [
        f"Anthropic retires {retiring} on {date}: set KA_LLM_MODEL to a current model"
        f" (unset, it is {DEFAULT_MODELS['anthropic']})"
    ]
    assert old.sources  # the answer itself is given as before
    current = replace(settings, model=DEFAULT_MODELS["anthropic"])
    assert not [w for w in Asker(current, embedder=usem3).ask(conn, question).warnings if "retires" in w]  # fmt: skip


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KA_LLM_PROVIDER": "gpt"}, "is not one of"),
        ({"KA_LLM_PROVIDER": "anthropic"}, "ANTHROPIC_API_KEY"),
        (
            {"KA_LLM_PROVIDER": "openai", "KA_LLM_TIMEOUT": "soon", "OPENAI_API_KEY": "k"},
            "bad LLM setting",
        ),
        # Tried as a path of api.openai.com four times, then "Connection error" naming nothing.
        (
            {"KA_LLM_PROVIDER": "openai", "KA_LLM_BASE_URL": "notaurl"},
            "KA_LLM_BASE_URL='notaurl' is not an http:// or https:// address",
        ),
    ],
)
def test_llm_settings_from_the_environment_fail_clearly(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KA_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(LLMConfigError, match=message):
        LLMSettings.from_env()


def test_no_provider_means_offline_and_ollama_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_LLM_PROVIDER", raising=False)
    assert LLMSettings.from_env().offline
    monkeypatch.setenv("KA_LLM_PROVIDER", "openai")
    monkeypatch.setenv("KA_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("KA_LLM_API_KEY", raising=False)
    settings = LLMSettings.from_env()
    assert (settings.provider, settings.model, settings.offline) == (
        "openai",
        "gpt-5.4-mini",
        False,
    )


def test_cli_ask_streams_the_answer_records_it_and_continues_a_conversation(
    vault_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: object,
) -> None:
    from knowledge_assets.cli import main

    monkeypatch.setenv("DATABASE_URL", vault_url)
    monkeypatch.delenv("KA_LLM_PROVIDER", raising=False)
    assert main(["ask", "夜に何のラーメンを作った？"]) == 0
    out = capsys.readouterr().out
    assert "> 夜は味噌ラーメンを作った。" in out and f"[1] 2026年1月10日の日記  ({DIARY}" in out
    # An offline answer uses no tokens: its line said "0 tokens" all the same.
    assert re.search(
        r"^-- confidence \w+ · extractive · \d+ notes? retrieved · \d+ ms$", out, re.M
    ), out
    conversation = out.rsplit("--conversation ", 1)[1].split()[0]
    assert main(["ask", "--conversation", conversation, "それは何時？", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["conversationId"] == conversation and data["metadata"]["model"] == "extractive"
    with db.connect(vault_url) as c:
        assert len(qa_history.turns(c, conversation)) == 2
    assert main(["ask", "--conversation", "not-a-uuid", "x"]) == 2
    assert "is not one this store gave out" in capsys.readouterr().err
    unknown = "00000000-0000-4000-8000-000000000000"
    assert main(["ask", "--conversation", unknown, "それは何時？"]) == 2
    assert f"no conversation {unknown} in the Q&A history" in capsys.readouterr().err
    assert main(["ask", "--no-save", "夜に何のラーメンを作った？"]) == 0
    assert "--conversation" not in capsys.readouterr().out  # nothing kept to follow up
    # Nothing quoted: the notes search found are named, ready for `get`.
    assert main(["ask", "--no-save", "庭に何を植える？"]) == 0
    out = capsys.readouterr().out
    assert (
        "search found these notes, but the answer cites none of them:\n"
        f"  - Vegetable garden plan  ({GARDEN})\n" in out
    ), out
