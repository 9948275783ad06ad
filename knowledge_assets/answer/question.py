"""What a question asks, for the offline answer: its kind, the topic it is about, and which of
its terms carry the answer.

- Question words and other words that say nothing about the topic (何, どこ, いつ, する, what,
  is, the, …) are not terms: a sentence does not answer 「ユニオン型とは何ですか？」 because it
  contains 何.
- Four kinds, read from the wording in Japanese and English: ``definition`` (「Xとは何ですか」,
  「Xって何？」, "What is X?"), ``usage`` (「Xの使い方」, "How do I use X?"), ``difference``
  (「XとYの違い」, "difference between X and Y", "X vs Y") and ``fact`` (anything else, jsquad's
  「梅雨明けの別名を何というか。」). For the first three the *topic* (X, and Y) is what the
  answer must be about; the *aspect* words (使い方, 違い, difference, …) count for less and are
  matched by their family (使い方 by 使う, 利用, 書き方; 違い by 異なる, 比較, difference).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from knowledge_assets.core.chunks.tokenize import query_terms, tokens

# Normalized forms as the tokenizer gives them (する → 為る, いる → 居る, それ → 其れ). The words
# that ask to go on about the same topic (もっと詳しく, 他には？, それについて, tell me more) say
# nothing about a topic either: taken for terms, any note holding もっと and 詳しい answered
# 「もっと詳しく」 with high confidence, where the follow-up is read with the question before it.
_JA_FUNCTION = """
何 なに なん 何故 なぜ どう どの どのよう どのような どんな どこ どれ どちら どっち いつ 誰 だれ 幾 幾つ
いくつ いくら 如何 教える 下さる くださる 願う 為る 居る 有る 成る 出来る 御座る
其れ 此れ 彼れ 其の 此の 彼の 其処 此処 よう こと もの ため 為 ところ つく
もっと 更に 詳しい 詳細 他 続き 具体 的
"""
_EN_FUNCTION = """
a an the is are was were be been being am do does did doing done what which who whom whose when
where why how of in on at to for from by with about between among into onto over under and or
nor but not no if then than so as i me my you your we our us he she it its they them their this
that these those there here can could should would will shall may might must have has had having
please tell explain know does anything something thing things whats what's
more further detail details detailed else also elaborate continue
"""
FUNCTION_WORDS = frozenset(_JA_FUNCTION.split()) | frozenset(_EN_FUNCTION.split())

# Aspect words: what the question asks about its topic. Each family is matched as one term.
_ASPECT_FAMILIES = [
    "違い 違う 異なる 差 差異 相違 比較 使い分け 使い分ける 対比"
    " difference differences differ differs compare comparison vs versus",
    "使い方 使う 使い 使用 利用 用いる 用法 書き方 書く 記述 use uses used using usage",
    "意味 定義 概要 指す 表す 言う 呼ぶ meaning means mean definition define defined refers",
    "方法 手順 仕方 やり方 遣り方 手段 method methods way ways steps step",
    "理由 原因 訳 reason reasons cause because",
    "例 例え 具体例 サンプル example examples sample samples",
]
ASPECTS: dict[str, frozenset[str]] = {
    word: family
    for family in (frozenset(line.split()) for line in _ASPECT_FAMILIES)
    for word in family
}
ASPECT_SHARE = 0.5  # an aspect word weighs this much of its IDF in a definition/usage/difference

_TAIL = re.compile(r"[\s?？!！。.、,]+$")
_POLITE = re.compile(r"(ですか|でしょうか|ますか|か|を?教えて(ください|下さい)?)$")
_WHAT = "(何|なに|なん)"
_DIFFERENCE_JA = (
    "の違い の差 の相違 の比較 の使い分け はどう違う は何が違う はなにが違う はどこが違う"
)
_USAGE_JA = (
    "の使い方 の使いかた の使用方法 の利用方法 の使用法 の用法 の書き方 の使用例 を使う方法"
    " はどう使う をどう使う はどうやって使う をどうやって使う を使うには"
)
_DEFINITION_JA = (
    f"とは{_WHAT}?(のこと)? って{_WHAT} というのは{_WHAT}? は{_WHAT}(のこと)? の意味 の定義"
)
_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("difference", re.compile(rf"^(?P<a>.+?)と(?P<b>.+?)({'|'.join(_DIFFERENCE_JA.split())})")),
    ("usage", re.compile(rf"^(?P<a>.+?)({'|'.join(_USAGE_JA.split())})")),
    ("definition", re.compile(rf"^(?P<a>.+?)({'|'.join(_DEFINITION_JA.split())})$")),
    (
        "difference",
        re.compile(
            r"^(?:what(?:'s| is| are)\s+)?(?:the\s+)?differences?\s+between\s+(?P<a>.+?)"
            r"\s+and\s+(?P<b>.+)$",
            re.I,
        ),
    ),
    (
        "difference",
        re.compile(
            r"^(?:how\s+(?:does|do|is|are)\s+)?(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$", re.I
        ),
    ),
    (
        "usage",
        re.compile(
            r"^(?:how\s+(?:do|can|should|would)\s+(?:i|you|we|one)\s+use|how\s+to\s+use"
            r"|usage\s+of|using)\s+(?P<a>.+)$",
            re.I,
        ),
    ),
    (
        "definition",
        re.compile(
            r"^(?:what(?:'s| is| are| does)|who\s+is|define|definition\s+of|meaning\s+of)\s+"
            r"(?:an?\s+|the\s+)?(?P<a>.+?)(?:\s+mean)?$",
            re.I,
        ),
    ),
]
_EN_ARTICLE = re.compile(r"^(?:an?|the)\s+", re.I)


@dataclass(frozen=True)
class Question:
    """A question read for the offline answer."""

    text: str
    kind: str = "fact"  # definition | usage | difference | fact
    topics: tuple[str, ...] = ()  # surface forms, as asked: ("ユニオン型",)
    topic_terms: frozenset[str] = field(default_factory=frozenset)

    @property
    def typed(self) -> bool:
        return self.kind != "fact"


def content_terms(text: str) -> list[str]:
    """The distinct tokens of ``text`` that can carry an answer: no question or function words."""
    return [t for t in query_terms(text) if t not in FUNCTION_WORDS]


def _strip(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).strip()
    for _ in range(3):
        text = _POLITE.sub("", _TAIL.sub("", text))
    return text.strip()


def read_question(text: str) -> Question:
    """The kind and topic of ``text``; ``fact`` with no topic when the wording is not recognised."""
    body = _strip(text)
    for kind, pattern in _KINDS:
        match = pattern.match(body)
        if not match:
            continue
        topics = tuple(
            _EN_ARTICLE.sub("", t.strip(" 「」『』\"'`")) for t in match.groupdict().values() if t
        )
        terms = frozenset(t for topic in topics for t in tokens(topic) if t not in FUNCTION_WORDS)
        if terms:
            return Question(text, kind, topics, terms)
    return Question(text)


def answer_weights(question: Question, weights: dict[str, float]) -> dict[str, float]:
    """Each term's weight in the answer: its IDF; an aspect word of a typed question (one that is
    not part of the topic) at ``ASPECT_SHARE`` of it."""
    if not question.typed:
        return dict(weights)
    return {
        t: w * ASPECT_SHARE if t in ASPECTS and t not in question.topic_terms else w
        for t, w in weights.items()
    }


def covers(term: str, text_tokens: set[str] | frozenset[str], families: bool = False) -> bool:
    """Whether ``text_tokens`` contain ``term`` (with ``families``: an aspect word also by one of
    its family)."""
    if term in text_tokens:
        return True
    family = ASPECTS.get(term) if families else None
    return family is not None and not family.isdisjoint(text_tokens)


def share(
    weights: dict[str, float], text_tokens: set[str] | frozenset[str], families: bool = False
) -> float:
    """The share of ``weights`` that ``text_tokens`` cover (0 to 1)."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if covers(t, text_tokens, families)) / total
