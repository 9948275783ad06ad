"""The offline answer without a database: reading a section's Markdown as sentences, reading the
question, and choosing the sentences to quote (and the confidence) from retrieved sections."""

from __future__ import annotations

import pytest

from knowledge_assets.answer.definitions import defines
from knowledge_assets.answer.extractive import INTRO, best_quotes, extractive_answer
from knowledge_assets.answer.prompt import NOT_FOUND
from knowledge_assets.answer.question import content_terms, read_question
from knowledge_assets.answer.retrieve import Passage, Retrieval, RetrievedNote
from knowledge_assets.answer.sentences import inline, section_sentences, split_sentences
from knowledge_assets.core.chunks.tokenize import tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("梅雨は雨季の一種である。5月から7月に来る。", ["梅雨は雨季の一種である。", "5月から7月に来る。"]),
        ("本当ですか？はい！そうです", ["本当ですか？", "はい！", "そうです"]),
        ("彼は「こんにちは。元気？」と言った。次です。", ["彼は「こんにちは。元気？」と言った。", "次です。"]),
        ("（注意。）次の文。", ["（注意。）", "次の文。"]),
        ("Node.js is fast, e.g. for tools. It runs 1.5 times faster! Next", ["Node.js is fast, e.g. for tools.", "It runs 1.5 times faster!", "Next"]),
        ("See union.md for more. Then stop.", ["See union.md for more.", "Then stop."]),
        ("型は大事です。TypeScript is typed.", ["型は大事です。", "TypeScript is typed."]),
    ],
)  # fmt: skip
def test_sentences_end_at_japanese_and_english_punctuation(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("line", "text", "only_links"),
    [
        ("詳しくは[ユニオン型](./union.md)を参照してください。", "詳しくはユニオン型を参照してください。", False),
        ("[判別可能なユニオン (discriminated union)](discriminated-union.md)", "判別可能なユニオン (discriminated union)", True),
        ("[object、Object、{}の違い](./difference-among-object-and-object.md)", "object、Object、{}の違い", True),
        ("[A](a.md)、[B](b.md) / [C](c.md)", "A、B / C", True),
        ("[[union|ユニオン型]]は[[types/enum]]と[[note#見出し]]です", "ユニオン型はenumとnote › 見出しです", False),
        ("[[ノート]]", "ノート", True),
        ("`Array<T>`は![図](a.png)[配列](a.md)の型です。<br/>", "`Array<T>`は配列の型です。", False),
        ("`[x](y)` はリンク記法です[^1]", "`[x](y)` はリンク記法です", False),
        ("特徴のひとつには[オブジェクトリテラル]があります。", "特徴のひとつにはオブジェクトリテラルがあります。", False),
        ("配列 a[0] と [x]", "配列 a[0] と [x]", False),
        ("<https://example.com> を開く", "https://example.com を開く", False),
    ],
)  # fmt: skip
def test_inline_markdown_becomes_its_text(line: str, text: str, only_links: bool) -> None:
    assert inline(line) == (text, only_links)


SECTION = """### `<` ジェネリクス (generic) ![ts]

TypeScriptのユニオン型(union type)は
「いずれかの型」を表現するものです。

```ts twoslash
type List = string | number[];
```

<!-- prettier-ignore
   a comment -->
import Tabs from '@theme/Tabs';

:::tip 注意
> [!note] 補足
> 引用の中の文です。
:::

| 内容 | 型 |
| --- | --- |
| 継承 | 可能 |

- 項目の一つ目
- 項目の
  二つ目
・letは再代入OK
<PostILearned>

$$
x = 1
$$

[関連](other.md)
[制御フロー分析](../statements/control-flow-analysis-and-type-guard.md)
[^1]: 脚注の定義

---
最後の文です。
"""


def test_a_section_is_read_as_its_prose() -> None:
    section = section_sentences(SECTION)
    texts = [s.text for s in section.sentences]
    assert texts == [
        "TypeScriptのユニオン型(union type)は「いずれかの型」を表現するものです。",
        "引用の中の文です。",
        "項目の一つ目",
        "項目の二つ目",
        "letは再代入OK",
        "最後の文です。",
    ]
    assert section.sentences[0].heading == "`<` ジェネリクス (generic)"
    assert section.sentences[1].heading == "補足"  # a callout's title heads its text
    assert section.sentences[2].heading == "`<` ジェネリクス (generic)"  # and no more
    assert section.link_share == pytest.approx(2 / 10)  # of the text lines


def test_a_section_of_links_is_mostly_links() -> None:
    section = section_sentences("[A](a.md)\n\n- [B](b.md)\n- [C](c.md)\n\n説明の文です。\n")
    assert [s.text for s in section.sentences] == ["説明の文です。"]
    assert section.link_share == 0.75


@pytest.mark.parametrize(
    ("question", "kind", "topics"),
    [
        ("ユニオン型とは何ですか？", "definition", ("ユニオン型",)),
        ("ユニオン型って何？", "definition", ("ユニオン型",)),
        ("型エイリアスとは", "definition", ("型エイリアス",)),
        ("What is a union type?", "definition", ("union type",)),
        ("ジェネリクスの使い方", "usage", ("ジェネリクス",)),
        ("オプショナルチェーンの書き方を教えてください", "usage", ("オプショナルチェーン",)),
        ("How do I use generics?", "usage", ("generics",)),
        ("letとconstの違いは？", "difference", ("let", "const")),
        ("enumとユニオン型はどう違う？", "difference", ("enum", "ユニオン型")),
        ("What is the difference between interface and type alias?", "difference", ("interface", "type alias")),
        ("Promise vs async/await", "difference", ("Promise", "async/await")),
        ("梅雨とは何季の一種か?", "fact", ()),  # 何 asks for part of the answer, not the topic
        ("日本で梅雨がないのは北海道とどこか。", "fact", ()),
        ("夜に何のラーメンを作った？", "fact", ()),
    ],
)  # fmt: skip
def test_the_kind_and_topic_of_a_question(question: str, kind: str, topics: tuple[str, ...]) -> None:  # fmt: skip
    read = read_question(question)
    assert (read.kind, read.topics) == (kind, topics)


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("ユニオン型とは何ですか？", ["ユニオン", "型"]),
        ("夜に何のラーメンを作った？", ["夜", "ラーメン", "作る"]),
        ("What is the difference between interface and type alias?", ["difference", "interface", "type", "alias"]),
        ("それはいつ？", []),
        ("もっと詳しく教えて", []),
        ("ほかには？", []),
        ("具体的には？", []),
        ("それについてもっと", []),
        ("Tell me more details, please", []),
        ("北海道は？", ["北海道"]),
    ],
)  # fmt: skip
def test_question_words_are_not_terms(question: str, terms: list[str]) -> None:
    assert content_terms(question) == terms


@pytest.mark.parametrize(
    ("sentence", "topic", "strength"),
    [
        ("TypeScriptのユニオン型(union type)は「いずれかの型」を表現するものです。", "ユニオン型", 1.0),
        ("ユニオン型とは、いずれかの型です。", "ユニオン型", 1.0),
        ("ジェネリクスは、コードの共通化と型の安全性を両立するための言語機能。", "ジェネリクス", 1.0),
        ("名前のついた型を型エイリアス(タイプエイリアス; type alias)と呼びます。", "型エイリアス", 1.0),
        ("IIFE (Immediately Invoked Function Expression; 即時実行関数式) とは定義と同時に実行される関数です。", "即時実行関数式", 1.0),
        ("JavaScriptにはジェネレーターという特殊な関数があります。", "ジェネレーター", 1.0),
        ("A union type is a type that can be one of several types.", "union type", 1.0),
        ("ジェネリクスは標準ライブラリの中でも多くの箇所で利用されています。", "ジェネリクス", 0.5),
        ("TypeScriptの判別可能なユニオン型(discriminated union)はユニオン型の応用です。", "ユニオン型", 0.0),
        ("文字列で構成された列挙型は文字列列挙型(string enum)と呼ばれます。", "列挙型", 0.0),
        ("列挙型名は型として扱うことができます。", "列挙型", 0.0),
        ("特に列挙型は型安全上の問題もあるため、よく検討してください。", "列挙型", 0.0),
        ("`plan`が意図するユニオン型にはなりませんが、近い型を得ることができました。", "ユニオン型", 0.0),
        ("Union types are everywhere.", "union type", 0.0),
    ],
)  # fmt: skip
def test_a_sentence_that_defines_the_topic(sentence: str, topic: str, strength: float) -> None:
    assert defines(sentence, (topic,)) == strength


def _note(path: str, title: str, rank: int, sections: list[tuple[str, str]]) -> RetrievedNote:
    note = RetrievedNote(path, "local", title, (), rank)
    for i, (heading, content) in enumerate(sections):
        terms = frozenset(tokens(f"{title}\n{heading}\n{content}"))
        note.passages.append(Passage(f"{path}#{i}", heading, content, 1.0, 1.0, ("keyword",), terms))  # fmt: skip
    return note


def _retrieval(question: str, notes: list[RetrievedNote]) -> Retrieval:
    """IDF-like weights: a term in fewer of these sections weighs more."""
    sections = [p.terms for n in notes for p in n.passages]
    weights = {
        t: 1.0 + len(sections) - sum(t in s for s in sections) for t in content_terms(question)
    }
    return Retrieval(question, notes, "usem3", 1.0, weights)


TS_NOTES = [
    _note("tips/generates-type-from-object.md", "オブジェクトから型を生成する", 1, [
        ("一般的な型を先に決めるプログラミング", "多くの言語ではその型が何かを決めてから、オブジェクトを決めます。\n\n"
         "`plan`が意図するユニオン型にはなりませんが、それなりに近い型を得ることができました。"),
    ]),
    _note("reference/values-types-variables/union.md", "ユニオン型 (union type)", 2, [
        ("ユニオン型 (union type)", "TypeScriptのユニオン型(union type)は「いずれかの型」を表現するものです。"),
        ("関連情報", "[判別可能なユニオン (discriminated union)](discriminated-union.md)"),
        ("ユニオン型の型注釈", "ユニオン型の型注釈は、2つ以上の型をパイプ記号(`|`)で繋げて書きます。\n\n"
         "```ts\nlet numberOrUndefined: number | undefined;\n```"),
    ]),
    _note("reference/values-types-variables/discriminated-union.md", "判別可能なユニオン型 (discriminated union)", 3, [
        ("通常のユニオン型は絞り込みが複雑になる", "TypeScriptの[ユニオン型](./union.md)は自由度が高いです。\n\n"
         "このコードはなんだかごちゃついていませんか。"),
    ]),
    _note("reference/packages/using-packages.md", "パッケージの使い方", 4, [
        ("パッケージの使い方", "パッケージをインストールしたら、コードの中でそのパッケージを使えるようになります。"),
    ]),
    _note("reference/generics/README.md", "ジェネリクス (generics)", 5, [
        ("ジェネリクス (generics)", "型の安全性とコードの共通化の両立は難しいものです。\n\n"
         "ジェネリクスを用いると、型の安全性とコードの共通化を両立することができます。"),
    ]),
]  # fmt: skip


def test_a_definition_question_quotes_the_defining_sentence_of_the_note_about_it() -> None:
    text, cited, confidence = extractive_answer(_retrieval("ユニオン型とは何ですか？", TS_NOTES))
    lead = best_quotes(_retrieval("ユニオン型とは何ですか？", TS_NOTES))[0]
    assert lead.text == "TypeScriptのユニオン型(union type)は「いずれかの型」を表現するものです。"
    note, level = cited[0]
    assert (note.note_id, level) == ("reference/values-types-variables/union.md", "high")
    assert text.startswith(f"{INTRO}\n\n> {lead.text}\n\n— ユニオン型 (union type)（`")
    assert confidence == "high"
    assert "](" not in text and "```" not in text and "ごちゃついて" not in text


def test_a_usage_question_quotes_its_topic_not_another_notes_usage() -> None:
    quotes = best_quotes(_retrieval("ジェネリクスの使い方", TS_NOTES))
    assert quotes[0].text.startswith("ジェネリクスを用いると")
    assert all(q.note.note_id != "reference/packages/using-packages.md" for q in quotes)


def test_nothing_relevant_is_not_found_and_a_weak_match_is_not_high() -> None:
    assert extractive_answer(_retrieval("量子色力学のxyzzy定理とは", TS_NOTES)) == (NOT_FOUND, [], "low")  # fmt: skip
    *_, confidence = extractive_answer(
        _retrieval("ユニオン型の型注釈とパイプとxyzzyの関係", TS_NOTES)
    )
    assert confidence != "high"


@pytest.mark.parametrize(
    ("question", "level"),
    [
        # every word of the question is in the quoted sentence: high
        ("ユニオン型の型注釈は何で繋げて書く？", "high"),
        ("パッケージをインストールしたら何を使える？", "high"),
        # one word of it is not: the quote may not answer it
        ("ユニオン型の型注釈はセミコロンで繋げる？", "medium"),
    ],
)
def test_a_quote_holding_the_whole_question_is_high_confidence(question: str, level: str) -> None:
    *_, confidence = extractive_answer(_retrieval(question, TS_NOTES))
    assert confidence == level
