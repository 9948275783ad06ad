"""A sentence and a heading read against the question's topic, for the offline answer: whether the
sentence defines the topic (「ユニオン型(union type)は…ものです」「…を型エイリアスと呼びます」
"A union type is …"), and whether a note title or heading is the topic itself."""

from __future__ import annotations

import re
import unicodedata

from knowledge_assets.answer.question import Question

_PAREN = re.compile(r"\s*[(（][^)）]*[)）]\s*")
# What may stand before a topic that is a sentence's subject (「TypeScriptのユニオン型は」), and
# before one that something is called (「…を型エイリアスと呼びます」「…にはXという…」).
_SUBJECT_BOUNDARY = frozenset("の、,「『(（;； \t\"'`*:：")
_CALLED_BOUNDARY = _SUBJECT_BOUNDARY | frozenset("はがをにでともへや")
_COMPOUND = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff々]")
_INSIDE_BRACKETS = re.compile(r"^[^()（）]{0,60}[)）]")
# How a definition ends: a copula, 「…のこと」「…を指す」, or a noun (「…言語機能。」); "X is …".
_DEFINITION_END = re.compile(
    r"(です|である|だ|のこと|を指す|を指します|を表す|を表します|をいう|をいいます|を言います"
    r"|[\u4e00-\u9fff\u30a0-\u30ffa-z0-9)）」`])[。．.]?[」』)）]*$|^\S.*\b(is|are)\b"
)
_DEFINITION_AFTER = re.compile(
    r"\s*(?:[(（][^)）]{0,60}[)）])?\s*(?:とは|は|というのは|って|is\b|are\b|refers\b|means\b)"
)
_CALLED_AFTER = re.compile(r"\s*(?:[(（][^)）]{0,60}[)）])?\s*(?:と|って)(?:呼|いい|言い|いう|言う|称)")  # fmt: skip
_SUBJECT_WITHIN = 30  # characters from the sentence's start where a subject may begin


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def defines(sentence: str, topics: tuple[str, ...]) -> float:
    """How plainly ``sentence`` defines one of ``topics``: 1 when the topic (maybe with a reading
    or translation in brackets) is its subject near its start and it ends as a definition does
    (「…です」「…である」「…のこと」, a noun; "X is …"), or when it says what something is called
    (「…をXと呼びます」「Xという…」); 0.5 for the subject alone; else 0."""
    text = _norm(sentence)
    best = 0.0
    for topic in (_norm(t) for t in topics if t.strip()):
        for match in re.finditer(re.escape(topic), text):
            start, rest = match.start(), text[match.end() :]
            if _continued(topic, rest):
                continue  # 列挙型名 is not 列挙型; "types" is not "type"
            rest = _INSIDE_BRACKETS.sub("", rest, count=1) if _opened(text, start) else rest
            if _bounded(text, start, topic, _CALLED_BOUNDARY) and _CALLED_AFTER.match(rest):
                return 1.0
            near = start <= _SUBJECT_WITHIN or rest.lstrip().startswith("とは")
            if near and _bounded(text, start, topic, _SUBJECT_BOUNDARY) and _DEFINITION_AFTER.match(rest):  # fmt: skip
                best = max(best, 1.0 if _DEFINITION_END.search(text) else 0.5)
    return best


def _bounded(text: str, start: int, topic: str, boundary: frozenset[str]) -> bool:
    """Whether ``topic`` found at ``start`` begins a word (not the tail of a longer compound:
    文字列列挙型 is not 列挙型) after one of ``boundary`` or at the start."""
    if start == 0:
        return True
    before = text[start - 1]
    if topic[0].isascii() and topic[0].isalnum() and not before.isalnum():
        return True
    return before in boundary


def _continued(topic: str, rest: str) -> bool:
    """Whether the word goes on after ``topic``: 列挙型名, ユニオン型エイリアス, "types"."""
    nxt = rest[:1]
    if not nxt:
        return False
    if topic[-1].isascii():
        return topic[-1].isalnum() and nxt.isascii() and nxt.isalnum()
    return bool(_COMPOUND.match(nxt)) and bool(_COMPOUND.match(topic[-1]))


def _opened(text: str, start: int) -> bool:
    """Whether ``text[start]`` stands inside an open bracket: 「IIFE (…; 即時実行関数式) とは」."""
    head = text[:start]
    return head.count("(") + head.count("（") > head.count(")") + head.count("）")


def named_by_topic(question: Question, name: str) -> bool:
    """Whether a title or heading is one of the question's topics (brackets and case aside)."""
    topics = {_norm(t).strip() for t in question.topics}
    return _norm(_PAREN.sub("", name)).strip() in topics or _norm(name).strip() in topics
