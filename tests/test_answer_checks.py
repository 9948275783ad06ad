"""Seed 001's answer checks, unit-tested on a retrieval made by hand: the share of an answer's
content words the retrieved passages hold, and the warnings an answer gets for citing no note or
for words mostly not in its notes. Through a model's reply: test_answer."""

from __future__ import annotations

import pytest

from knowledge_assets.answer.checks import NO_CITATION, grounding_warnings, shared_words
from knowledge_assets.answer.retrieve import Passage, Retrieval, RetrievedNote


def _retrieval(*terms: str) -> Retrieval:
    passage = Passage(
        "c1", "夕食", "夜は味噌ラーメンを作った。", 1.0, 1.0, ("keyword",), frozenset(terms)
    )
    note = RetrievedNote("日記/2026-01-10.md", "local", "2026年1月10日の日記", (), 1, [passage])
    return Retrieval("夜に何を作った？", [note], None, 1.0, {})


NOTE_WORDS = ("夜", "味噌", "ラーメン", "作る", "2026", "年", "1", "月", "10", "日", "日記")


@pytest.mark.parametrize(
    ("answer", "share"),
    [
        ("味噌ラーメンを作った", 1.0),  # every content word is the note's
        # 4 of 8: 夜 味噌 ラーメン 作る are the note's, 量子 力学 方程 式 are not
        ("夜は味噌ラーメンを作った。量子力学の方程式", 0.5),
        ("量子力学の基礎方程式", 0.0),
        ("です。", None),  # no content word to judge
    ],
)
def test_the_share_of_an_answers_words_in_its_notes(answer: str, share: float | None) -> None:
    found = shared_words(answer, _retrieval(*NOTE_WORDS))
    assert found == pytest.approx(share) if share is not None else found is None


@pytest.mark.parametrize(
    ("answer", "cited", "warned"),
    [
        ("味噌ラーメンを作った", 1, []),
        ("味噌ラーメンを作った", 0, [NO_CITATION]),
        ("量子力学の基礎方程式はシュレディンガー方程式", 1, ["may stray"]),
        ("量子力学の基礎方程式はシュレディンガー方程式", 0, [NO_CITATION, "may stray"]),
    ],
)
def test_an_answer_citing_nothing_or_straying_from_its_notes_is_warned_of(
    answer: str, cited: int, warned: list[str]
) -> None:
    warnings = grounding_warnings(answer, _retrieval(*NOTE_WORDS), cited)
    assert len(warnings) == len(warned)
    assert all(w in got for w, got in zip(warned, warnings, strict=True))
