"""Reading the model's answer whatever its shape, streaming the answer field, the context budget."""

from __future__ import annotations

import pytest

from knowledge_assets.answer.context import build_context
from knowledge_assets.answer.parse import AnswerStreamer, parse_model_answer
from knowledge_assets.answer.pipeline import Turn, _history_messages
from knowledge_assets.answer.prompt import estimate_tokens
from knowledge_assets.answer.retrieve import Passage, RetrievedNote

CLEAN = '{"answer": "出梅です", "sources": [{"noteId": "a.md", "noteTitle": "梅雨", "relevance": "高"}], "confidence": "high"}'


@pytest.mark.parametrize(
    ("raw", "answer", "parsed", "ids"),
    [
        (CLEAN, "出梅です", "json", ["a.md"]),
        (f"```json\n{CLEAN}\n```", "出梅です", "repaired", ["a.md"]),
        (f"はい、回答です。\n{CLEAN}\n以上です。", "出梅です", "repaired", ["a.md"]),
        (
            '{"answer": "A", "sources": [{"noteId": "a.md",},], "confidence": "low",}',
            "A",
            "repaired",
            ["a.md"],
        ),
        (
            '{"answer": "途中で\\"切れた", "sources": [{"noteId": "a',
            '途中で"切れた',
            "answer-field",
            [],
        ),
        (
            "梅雨明けは出梅と呼ばれます（梅雨）。",
            "梅雨明けは出梅と呼ばれます（梅雨）。",
            "prose",
            [],
        ),
        (
            '{"answer": "ids only", "sources": ["a.md", 3, {"title": "T"}]}',
            "ids only",
            "json",
            ["a.md", ""],
        ),
    ],
)
def test_parse_model_answer_reads_json_fenced_broken_and_prose(
    raw: str, answer: str, parsed: str, ids: list[str]
) -> None:
    result = parse_model_answer(raw)
    assert (result.answer, result.parsed) == (answer, parsed)
    assert [s["noteId"] for s in result.sources] == ids


def test_parse_maps_japanese_relevance_and_confidence_levels() -> None:
    result = parse_model_answer(CLEAN)
    assert result.sources[0]["relevance"] == "high"
    assert result.confidence == "high"
    assert parse_model_answer('{"answer": "x", "confidence": "たぶん"}').confidence is None


@pytest.mark.parametrize("size", [1, 3, 7, 50])
def test_streamer_reveals_the_answer_field_as_it_grows(size: int) -> None:
    raw = '{"answer": "改行\\nと\\"引用\\"と日本語", "sources": [], "confidence": "high"}'
    streamer = AnswerStreamer()
    shown = "".join(streamer.feed(raw[i : i + size]) for i in range(0, len(raw), size))
    assert shown == '改行\nと"引用"と日本語'
    assert parse_model_answer(streamer.raw).answer == shown


# 𠮷 and 😀 lie outside the Basic Multilingual Plane: a model writing JSON as Python's json.dumps
# does escapes each as a surrogate pair, \ud842\udfb7 and \ud83d\ude00.
ASTRAL = (
    '{"answer": "\\ud842\\udfb7野家で食べた\\ud83d\\ude00", "sources": [], "confidence": "high"}'
)


@pytest.mark.parametrize("size", [1, 3, 7, 8, 50])
def test_streamer_shows_a_character_escaped_as_a_surrogate_pair_whole(size: int) -> None:
    """A chunk that ended between the two halves of a pair showed the first half alone (which
    no reply can encode), and the answer stopped growing after it."""
    streamer = AnswerStreamer()
    pieces = [streamer.feed(ASTRAL[i : i + size]) for i in range(0, len(ASTRAL), size)]
    assert "".join(pieces) == "𠮷野家で食べた😀" == parse_model_answer(ASTRAL).answer
    assert all(isinstance(piece.encode(), bytes) for piece in pieces)  # each is valid Unicode


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ('{"answer": "半分\\ud83dだけ", "sources": []}', "半分\ufffdだけ"),
        ('{"answer": "逆\\ude00だけ", "sources": []}', "逆\ufffdだけ"),
        ('{"answer": "NUL\\u0000入り", "sources": []}', "NUL入り"),
        ('{"answer": "切れた\\ud83d', "切れた"),
    ],
)
def test_an_answer_holds_only_text_that_can_be_shown_and_kept(raw: str, answer: str) -> None:
    """Half a pair or a NUL in the model's JSON reached the answer: the reply could not be
    encoded, nor the answer kept in the history."""
    parsed = parse_model_answer(raw)
    assert parsed.answer == answer and parsed.answer.encode()
    streamer = AnswerStreamer()
    assert streamer.feed(raw) == answer


def test_streamer_shows_a_prose_reply_as_it_comes() -> None:
    streamer = AnswerStreamer()
    assert streamer.feed("梅雨明けは") == "梅雨明けは"
    assert streamer.feed("出梅です。") == "出梅です。"


def _note(rank: int, sections: int, chars: int) -> RetrievedNote:
    passages = [
        Passage(f"c{i}", f"第{i}段落", "あ" * chars, 1.0, 1.0, ("keyword",))
        for i in range(sections)
    ]
    content = "\n\n".join(f"## {p.heading}\n{p.content}" for p in passages)
    return RetrievedNote(
        f"n{rank}.md", "local", f"ノート{rank}", ("タグ",), rank, passages, content=content
    )


@pytest.mark.parametrize("strategy", ["sections", "notes"])
@pytest.mark.parametrize("budget", [300, 1000, 4000])
def test_context_stays_within_the_token_budget_with_metadata(strategy: str, budget: int) -> None:
    notes = [_note(rank, sections=4, chars=600) for rank in range(1, 6)]
    ctx = build_context(notes, budget=budget, strategy=strategy)
    assert estimate_tokens(ctx.text) <= ctx.tokens <= budget
    assert ctx.note_ids and ctx.note_ids[0] == "n1.md"
    assert "## [1] ノート1\nnoteId: n1.md" in ctx.text and "タグ: タグ" in ctx.text


def test_whole_notes_strategy_uses_whole_notes_that_fit_and_sections_otherwise() -> None:
    small, large = _note(1, sections=2, chars=90), _note(2, sections=8, chars=900)
    ctx = build_context([small, large], budget=1500, strategy="notes")
    assert small.content.strip() in ctx.text  # whole note, with its "## " headings
    assert "### 第0段落" in ctx.text  # the large note did not fit whole: its sections
    assert ctx.note_ids == ["n1.md", "n2.md"]


def test_history_keeps_the_newest_turns_that_fit() -> None:
    turns = [Turn(f"質問{i}", "答" * 300) for i in range(5)]
    messages, used = _history_messages(turns, budget=250)
    assert [m["content"] for m in messages if m["role"] == "user"] == ["質問3", "質問4"]
    assert used <= 250
