"""Snippets and heading paths as plain text: what the command line and the MCP server show of a
note's Markdown and MDX."""

from __future__ import annotations

import pytest

from knowledge_assets.core.plain_text import plain_doc, plain_heading, plain_snippet, plain_text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("詳しくは[any型](../values-types-variables/any.md)を参照", "詳しくはany型を参照"),
        ("[参照][typeof演算子]と[Slack]", "参照と[Slack]"),  # a shortcut reference stays as written
        ("[[日記/2026-01-10|昨日の日記]]と[[inbox]]", "昨日の日記とinbox"),
        ("図 ![構成図](img/arch.png) と ![[diagram.png]]", "図 構成図 と"),
        ("[![](/map.svg)](/map.svg)地図", "地図"),
        ("演算子 ![js] と ![ts][badge]", "演算子 js と ts"),
        ("前\n```ts twoslash\n// @errors: 2339\nconst a = 1;\n```\n後", "前 const a = 1; 後"),
        ("```ts\n// @noErrors\n// @ts-expect-error\nx;\n//  ^?\n```", "// @ts-expect-error x;"),
        ("~~~python\nprint(1)\n~~~", "print(1)"),
        ("### t ###\n本文", "t 本文"),
        ("# 題\n## 節\n####### 七つ", "題 節 ####### 七つ"),
        ("<PostILearned>\n\n・学び\n\n</PostILearned>", "・学び"),
        ('<img src="a.png" alt="x"/>改行<br>と<kbd>Ctrl</kbd>', "改行とCtrl"),
        ("<!-- メモ -->本文", "本文"),
        ("`Array<T>`型と`a == b`、Array<number>型", "Array<T>型とa == b、Array<number>型"),
        ("```ts\nfunction f<T>(x: T) {}\n```", "function f<T>(x: T) {}"),
        ("``a ` b``と**強調**", "a ` bと強調"),
        ("> [!tip] 便利\n> ==ハイブリッド==が既定", "便利 ハイブリッドが既定"),
        (":::details 答え\n42\n:::", "42"),
        ("本文[^1]。\n\n[^1]: 注の本文\n[Slack]: https://slack.com/", "本文。 注の本文"),
        ("段落 ^abc1\n次 a == b", "段落 次 a == b"),
    ],
)
def test_markdown_reads_as_its_words(raw: str, expected: str) -> None:
    assert plain_snippet(raw, 500) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("前\n<script>\nconst secret = 1;\n\n```\n</script>\n後", "前 後"),
        ('前<style type="text/css">p { color: red }</style>後', "前後"),
        ("前<SCRIPT>\nalert(1)\n</Script >後", "前 後"),
        ("前<script>x</script>中<style>y</style>後", "前中後"),
        ("`<style>` タグで色を付ける", "<style> タグで色を付ける"),  # code: shown as written
        ("```html\n<script>\nf()\n```\n後", "<script> f() 後"),
        ('<script src="a.js"/>本文', "本文"),  # opens nothing
        ("前<scripts>本文", "前本文"),  # another tag: only the tag is left out
    ],
)
def test_script_and_style_text_is_left_out_as_the_note_view_hides_it(
    raw: str, expected: str
) -> None:
    assert plain_snippet(raw, 500) == expected


def test_a_snippet_is_cut_after_cleaning() -> None:
    raw = "[リンク](" + "x" * 300 + ") の後の本文"
    assert plain_snippet(raw, 12) == "リンク の後の本文"
    assert plain_snippet("あ" * 50, 10) == "あ" * 9 + "…"


def test_lines_stay_lines() -> None:
    assert plain_text("## 節\n[a](b)\n\n本文") == "節\na\n\n本文"


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        (
            "記号 > `!` 論理否定演算子 (logical not operator) ![js]",
            "記号 > ! 論理否定演算子 (logical not operator) js",
        ),
        ("unknown型 > unknown型は型安全なany型", "unknown型 > unknown型は型安全なany型"),
        ("[any型](any.md)の  使い方", "any型の 使い方"),
        ("<Badge>新</Badge> `x` ", "新 x"),
        ("", ""),
        (None, ""),
    ],
)
def test_heading_paths_read_as_text(heading: str | None, expected: str) -> None:
    assert plain_heading(heading) == expected


def test_help_texts_lose_double_backticks() -> None:
    assert plain_doc("The ``knowledge-assets`` command; ``--conversation ID``") == (
        "The `knowledge-assets` command; `--conversation ID`"
    )
