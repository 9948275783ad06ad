"""The seed-000 chunker: ``##`` sections, intro chunk, ``###`` re-split and its fallbacks."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from knowledge_assets.core.chunks.chunking import (
    CHUNKER_VERSION,
    Chunk,
    build_embedding_text,
    chunk_document,
    context_previous,
    estimate_tokens,
    slug_from_filename,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SURVIVAL = SHARED / "eval" / "survival-ts" / "docs"
JSQUAD_VAULT = SHARED / "eval" / "jsquad" / "vault"

# H1 and ## lines are the only lines a chunk's content does not repeat.
_TITLE_LINE = re.compile(r"^ {0,3}#{1,2}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
# HTML comments outside code are left out of chunks.
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _body_without_titles(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if not _TITLE_LINE.match(line))


def _headings(chunks: list[Chunk]) -> list[str]:
    return [c.heading for c in chunks]


def test_version_is_a_string() -> None:
    assert isinstance(CHUNKER_VERSION, str) and CHUNKER_VERSION


def test_chunker_does_not_import_dagster() -> None:
    code = "import sys, knowledge_assets.core.chunks.chunking; sys.exit('dagster' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# --- sections -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "# 梅雨\n\n梅雨は東アジアの気象現象。\n\n## 梅雨入り\n\n五月に始まる。\n",
            [("梅雨", "梅雨は東アジアの気象現象。"), ("梅雨入り", "五月に始まる。")],
        ),
        (
            "# Rain\n\nIntro paragraph.\nSecond line.\n\n## Onset\n\nIn May.\n",
            [("Rain", "Intro paragraph.\nSecond line."), ("Onset", "In May.")],
        ),
        (
            "import Tabs from '@theme/Tabs';\n\n# 題\n\n<Tabs />\n\n## 節\n本文\n",
            [("題", "import Tabs from '@theme/Tabs';\n\n\n<Tabs />"), ("節", "本文")],
        ),
    ],
    ids=["ja", "en", "mdx-before-h1"],
)
def test_text_between_h1_and_first_h2_is_its_own_chunk(
    body: str, expected: list[tuple[str, str]]
) -> None:
    chunks = chunk_document("n.md", {}, body)
    assert [(c.heading, c.content) for c in chunks] == expected
    assert chunks[0].heading == chunks[0].parent_heading == chunks[0].heading_path


@pytest.mark.parametrize(
    "body",
    ["# 題\n\n## 節\n本文\n", "\n\n## 節\n本文\n", "# Title\n   \n\t\n## 節\n本文\n"],
    ids=["h1-only", "frontmatter-only", "whitespace"],
)
def test_blank_intro_makes_no_chunk(body: str) -> None:
    assert _headings(chunk_document("n.md", {}, body)) == ["節"]


@pytest.mark.parametrize("body", ["", "\n\n", "# 題だけ\n"], ids=["empty", "blank", "h1-only"])
def test_a_note_without_text_has_no_chunks(body: str) -> None:
    assert chunk_document("n.md", {"title": "x"}, body) == []


@pytest.mark.parametrize(
    ("path", "meta", "body", "heading"),
    [
        ("a.md", {}, "# 見出し\n本文。\n### 小\n詳細。\n", "見出し"),
        ("a.md", {"title": "前付けの題"}, "本文。\n#### 細\n詳細。\n", "前付けの題"),
        ("notes/20251230_my-doc.md", {}, "Just text.\n\nMore text.\n", "my-doc"),
    ],
    ids=["h1", "fm-title", "slug"],
)
def test_a_note_without_h2_is_one_chunk(
    path: str, meta: dict[str, Any], body: str, heading: str
) -> None:
    (chunk,) = chunk_document(path, meta, body)
    assert chunk.heading == chunk.parent_heading == heading
    assert _squash(chunk.content) == _squash(_body_without_titles(body))


@pytest.mark.parametrize("level", ["###", "####", "#####"])
def test_deeper_headings_stay_inside_their_chunk(level: str) -> None:
    body = f"# T\n## 節\n前文。\n{level} 小見出し\n本文。\n## 次\n終わり。\n"
    chunks = chunk_document("n.md", {}, body)
    assert _headings(chunks) == ["節", "次"]
    assert chunks[0].content == f"前文。\n{level} 小見出し\n本文。"


@pytest.mark.parametrize(
    "fenced",
    [
        "```bash\n## not a heading\n# nor this\n```",
        "~~~\n## not a heading\n~~~",
        "````markdown\n```\n## not a heading\n```\n````",
        "   ```ts\n## not a heading\n   ```",
        "~~~~\n## not a heading\n~~~\n## still code\n~~~~~",
        "1. step\n   ```sh\n   # comment\n## not a heading\n      ```",
    ],
    ids=["backticks", "tildes", "nested-longer", "indented-3", "short-close", "list-close"],
)
def test_headings_inside_fenced_code_are_content(fenced: str) -> None:
    body = f"## 節\n前。\n{fenced}\n後。\n## 次\n終わり。\n"
    chunks = chunk_document("n.md", {}, body)
    assert _headings(chunks) == ["節", "次"]
    assert fenced in chunks[0].content


def test_backticks_with_a_backtick_in_the_info_string_are_not_a_fence() -> None:
    body = "## 節\n```inline``` code\n## 次\n本文\n"
    assert _headings(chunk_document("n.md", {}, body)) == ["節", "次"]


def test_unclosed_fence_runs_to_the_end_and_loses_nothing() -> None:
    body = "## 節\n```\n## code\n"
    (chunk,) = chunk_document("n.md", {}, body)
    assert chunk.content == "```\n## code"


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("## Title ##", "Title"),
        ("##   空白   #####  ", "空白"),
        ("## C#", "C#"),
        ("## C# ##", "C#"),
        ("   ## indented", "indented"),
        ("##\tタブ", "タブ"),
    ],
)
def test_h2_variants_are_headings(line: str, heading: str) -> None:
    chunks = chunk_document("n.md", {}, f"{line}\n本文\n")
    assert _headings(chunks) == [heading]


@pytest.mark.parametrize(
    "line",
    ["#hashtag", "##tag", "    ## indented code", "####### seven", "<h2>html</h2>", "Setext\n---"],
)
def test_non_headings_are_content(line: str) -> None:
    (chunk,) = chunk_document("n.md", {"title": "T"}, f"{line}\n本文\n")
    assert chunk.heading == "T"
    assert line.strip() in chunk.content


def test_a_later_h1_starts_a_new_intro_and_parents_what_follows() -> None:
    body = "# 第一部\n序。\n## 節A\nA。\n# 第二部\n序二。\n## 節B\nB。\n"
    chunks = chunk_document("n.md", {}, body)
    assert [(c.parent_heading, c.heading) for c in chunks] == [
        ("第一部", "第一部"),
        ("第一部", "節A"),
        ("第二部", "第二部"),
        ("第二部", "節B"),
    ]
    assert chunks[3].heading_path == "第二部 > 節B"
    assert all("title:第一部|" in c.embedding_text for c in chunks)


def test_crlf_and_bom_give_the_same_chunks() -> None:
    body = "# 題\n\n序文。\n\n## 節\n本文。\n```\n## x\n```\n"
    crlf = "\ufeff" + body.replace("\n", "\r\n")
    assert chunk_document("n.md", {}, crlf) == chunk_document("n.md", {}, body)


# --- parent heading, slug, title and tags ---------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "body", "parent", "title"),
    [
        ({"title": "前付け"}, "# 見出し一\n## 節\nx\n", "見出し一", "前付け"),
        ({"title": "前付け"}, "## 節\nx\n", "前付け", "前付け"),
        ({"title": "  "}, "## 節\nx\n", "my-doc", "my-doc"),
        ({}, "## 節\nx\n", "my-doc", "my-doc"),
        ({"title": 2024}, "## 節\nx\n", "2024", "2024"),
    ],
    ids=["h1-wins-parent", "fm-title", "blank-title", "slug", "non-string-title"],
)
def test_parent_heading_and_title_fallbacks(
    meta: dict[str, Any], body: str, parent: str, title: str
) -> None:
    (chunk,) = chunk_document("vault/20251230_my-doc.md", meta, body)
    assert chunk.parent_heading == parent
    assert chunk.embedding_text.startswith(f"title:{title}|tags:")


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("notes/20251230_my-doc.md", "my-doc"),
        ("20251230_my-doc.md", "my-doc"),
        ("a10336_梅雨.md", "梅雨"),
        ("dir/plain.md", "plain"),
        ("a_b_c.md", "b_c"),
        ("v1.2_notes.mdx", "notes"),
        ("noext", "noext"),
        ("dir\\win_name.md", "name"),
        ("trailing_.md", "trailing_"),
    ],
)
def test_slug_from_filename(path: str, slug: str) -> None:
    assert slug_from_filename(path) == slug


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["a", "b"], "a,b"),
        (["#日本語", " spaced ", None, 3], "日本語,spaced,3"),
        ("a, b", "a,b"),
        ("a b  #c", "a,b,c"),
        ("single", "single"),
        ("", ""),
        (None, ""),
        ((), ""),
    ],
    ids=["list", "messy-list", "comma-string", "space-string", "single", "empty", "none", "tuple"],
)
def test_tags_are_normalised(tags: Any, expected: str) -> None:
    meta = {"title": "T"} if tags == () else {"title": "T", "tags": tags}
    (chunk,) = chunk_document("n.md", meta, "## 節\n本文\n")
    assert chunk.embedding_text.splitlines()[0] == f"title:T|tags:{expected}"


# --- context and embedding text ------------------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "expected"),
    [
        ("一文目。二文目。三文目。", "二文目。三文目。"),
        ("唯一の文", "唯一の文。"),
        ("First. Second! Third?", "Second。Third。"),
        ("全角ピリオド．感嘆！疑問？", "感嘆。疑問。"),
        ("line one\nline two\n\n", "line one。line two。"),
        ("", None),
        (None, None),
        ("。。\n...", None),
    ],
    ids=["ja", "ja-one", "en", "fullwidth", "newlines", "empty", "none", "punct-only"],
)
def test_context_previous(previous: str | None, expected: str | None) -> None:
    assert context_previous(previous) == expected


def test_embedding_text_is_seed_000_format_exactly() -> None:
    meta = {"title": "RAG設計", "tags": ["rag", "#design"]}
    body = "# RAG設計\n\n個人文書の検索。目的を書く。\n\n## チャンキング\n\n`##`で分割する。\n"
    intro, section = chunk_document("notes/20251230_rag.md", meta, body)
    assert intro.embedding_text == (
        "title:RAG設計|tags:rag,design\n\n# RAG設計\n\n## RAG設計\n\n個人文書の検索。目的を書く。"
    )
    assert section.embedding_text == (
        "title:RAG設計|tags:rag,design\n\n"
        "[prev] 個人文書の検索。目的を書く。\n\n"
        "# RAG設計\n\n"
        "## チャンキング\n\n"
        "`##`で分割する。"
    )
    assert section.heading_path == "RAG設計 > チャンキング"


@pytest.mark.parametrize(
    ("context", "parent", "expected"),
    [
        (None, "P", "title:T|tags:a,b\n\n# P\n\n## H\n\nbody"),
        ("前。", "", "title:T|tags:a,b\n\n[prev] 前。\n\n## H\n\nbody"),
    ],
)
def test_build_embedding_text(context: str | None, parent: str, expected: str) -> None:
    text = build_embedding_text(
        title="T", tags=["a", "b"], context_prev=context, parent_heading=parent, heading="H",
        content="\n body \n",
    )  # fmt: skip
    assert text == expected


def test_hash_estimate_and_index_are_derived_from_the_embedding_text() -> None:
    body = "# T\n序。\n## A\nあ。\n## B\nい。\n## C\nう。\n"
    chunks = chunk_document("n.md", {"tags": "x"}, body)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text_hash == hashlib.sha256(chunk.embedding_text.encode()).hexdigest()
        assert chunk.token_estimate == estimate_tokens(chunk.embedding_text)


def test_chunking_is_deterministic() -> None:
    body = SAMPLE_LONG_JA * 3
    first = chunk_document("n.md", {"tags": ["a"]}, body, max_tokens=120)
    second = chunk_document("n.md", {"tags": ["a"]}, body, max_tokens=120)
    assert first == second


# --- token estimate ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("abc", 1), ("abcd", 2), ("日本語", 3), ("日本 語", 4), ("カナとhangul한글", 7)],
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog. " * 20,
        "const add = (a: number, b: number): number => a + b;\n" * 20,
        "日本語の文章はおおむね一文字一トークン以下で数えられる。" * 20,
    ],
    ids=["english", "code", "japanese"],
)
def test_estimate_is_conservative(text: str) -> None:
    # Subword tokenizers average ~4 English/code chars per token and <=1 token per kana/kanji.
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    ascii_chars = len(text) - non_ascii
    assert estimate_tokens(text) >= non_ascii + ascii_chars / 4


# --- over-limit re-splitting ---------------------------------------------------------------

SAMPLE_LONG_JA = (
    "# 長文\n\n## 大きな節\n\n"
    + "\n\n".join(f"第{i}段落の文です。続きの文もあります。" for i in range(1, 13))
    + "\n"
)


def test_oversized_section_is_resplit_at_h3() -> None:
    sub = "本文です。" * 20
    body = f"# 題\n## 節\n前文。\n### 小A\n{sub}\n### 小B\n{sub}\n#### 細\n細部。\n## 次\n短い。\n"
    chunks = chunk_document("n.md", {}, body, max_tokens=200)
    assert [(c.heading, c.heading_path) for c in chunks] == [
        ("節", "題 > 節"),
        ("節 > 小A", "題 > 節 > 小A"),
        ("節 > 小B", "題 > 節 > 小B"),
        ("次", "題 > 次"),
    ]
    assert all(c.warning is None for c in chunks)
    assert chunks[1].content.startswith("### 小A\n")
    assert "#### 細\n細部。" in chunks[2].content
    assert _squash("".join(c.content for c in chunks)) == _squash(_body_without_titles(body))
    assert all(c.token_estimate <= 200 for c in chunks)


def test_resplit_skips_a_blank_lead_before_the_first_h3() -> None:
    body = "## 節\n\n### 小A\n" + "あ。" * 60 + "\n### 小B\n" + "い。" * 60 + "\n"
    chunks = chunk_document("n.md", {"title": "T"}, body, max_tokens=200)
    assert _headings(chunks) == ["節 > 小A", "節 > 小B"]


@pytest.mark.parametrize(
    ("paragraph", "max_tokens"),
    [
        ("これは日本語の段落です。二つ目の文があります。", 120),
        ("This is an English paragraph. It has a second sentence too.", 80),
    ],
    ids=["ja", "en"],
)
def test_section_without_h3_falls_back_to_paragraphs(paragraph: str, max_tokens: int) -> None:
    paragraphs = [f"{i}: {paragraph}" for i in range(1, 16)]
    body = "# Title\n\n## Big\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_document("n.md", {}, body, max_tokens=max_tokens)
    n = len(chunks)
    assert n > 1
    assert _headings(chunks) == [f"Big ({i}/{n})" for i in range(1, n + 1)]
    assert chunks[-1].heading_path == f"Title > Big ({n}/{n})"
    for chunk in chunks:
        assert chunk.warning is not None
        assert (
            "'Big' exceeds" in chunk.warning and "has no ###: split on paragraphs" in chunk.warning
        )
        assert chunk.token_estimate <= max_tokens
    contents = "\n".join(c.content for c in chunks)
    assert all(p in contents for p in paragraphs)  # every paragraph whole and present
    assert _squash(contents) == _squash(_body_without_titles(body))


def test_h3_part_still_too_big_falls_back_with_numbered_parts() -> None:
    big = "\n\n".join(f"段落{i}の文章です。" * 3 for i in range(10))
    body = f"## 節\n### 小\n{big}\n### 短\n短い。\n"
    chunks = chunk_document("n.md", {"title": "T"}, body, max_tokens=150)
    parts = [c for c in chunks if c.heading.startswith("節 > 小 (")]
    assert len(parts) > 1 and parts[0].heading == f"節 > 小 (1/{len(parts)})"
    assert parts[0].heading_path == f"T > 節 > 小 (1/{len(parts)})"
    assert all("after the ### split" in (c.warning or "") for c in parts)
    assert chunks[-1].heading == "節 > 短" and chunks[-1].warning is None
    assert _squash("".join(c.content for c in chunks)) == _squash(body.replace("## 節", ""))


def test_fenced_code_is_one_paragraph_in_the_fallback() -> None:
    code = "```ts\nconst a = 1;\n\n\nconst b = 2;\n```"
    body = "## 節\n\n" + "前の段落。" * 10 + f"\n\n{code}\n\n" + "後の段落。" * 10 + "\n"
    chunks = chunk_document("n.md", {"title": "T"}, body, max_tokens=110)
    assert len(chunks) > 1
    assert any(code in c.content for c in chunks)


@pytest.mark.parametrize(
    ("sentence", "max_tokens"),
    [("長い段落の中の一文です。", 150), ("A sentence inside one long paragraph. ", 100)],
    ids=["ja", "en"],
)
def test_huge_paragraph_falls_back_to_sentences(sentence: str, max_tokens: int) -> None:
    paragraph = "".join(f"{i}{sentence}" for i in range(40))
    body = f"## 節\n{paragraph}\n"
    chunks = chunk_document("n.md", {"title": "T"}, body, max_tokens=max_tokens)
    assert len(chunks) > 2
    for chunk in chunks:
        assert "split on sentences" in (chunk.warning or "")
        assert chunk.token_estimate <= max_tokens
        assert re.search(r"[。.]$", chunk.content)  # cut only at sentence ends
    assert _squash("".join(c.content for c in chunks)) == _squash(paragraph)


@pytest.mark.parametrize(
    "giant",
    ["読点だけで続く、" * 200 + "終わり", "words without any full stop " * 100],
    ids=["ja", "en"],
)
def test_a_single_giant_sentence_is_kept_whole_with_a_warning(giant: str) -> None:
    body = f"## 節\n短い文。\n\n{giant}\n\n後の文。\n## 次\n次の本文。\n"
    chunks = chunk_document("n.md", {"title": "T"}, body, max_tokens=200)
    (whole,) = [c for c in chunks if giant.strip() in c.content]
    assert whole.content == giant.strip()
    assert whole.warning is not None and "single sentence" in whole.warning
    assert whole.token_estimate > 200
    following = chunks[whole.index + 1]
    assert "[prev]" not in following.embedding_text  # a giant context is dropped, not cut
    assert _headings(chunks)[-1] == "次"
    assert _squash("".join(c.content for c in chunks)) == _squash(_body_without_titles(body))


def test_custom_estimate_is_used() -> None:
    body = "## 節\n" + "\n\n".join(["abcdefghij"] * 10) + "\n"
    default = chunk_document("n.md", {"title": "T"}, body, max_tokens=100)
    by_chars = chunk_document("n.md", {"title": "T"}, body, max_tokens=100, estimate=len)
    assert len(default) == 1 and len(by_chars) > 1
    assert all(c.token_estimate == len(c.embedding_text) for c in by_chars)


# --- real documents ------------------------------------------------------------------------


def _load(path: Path) -> tuple[dict[str, Any], str]:
    raw = path.read_text(encoding="utf-8")
    try:
        post = frontmatter.loads(raw)
    except Exception:  # a broken header is the parser's business: chunk the whole text
        return {}, raw
    return dict(post.metadata), post.content


@pytest.mark.skipif(not SURVIVAL.is_dir(), reason="shared/eval/survival-ts/docs is missing")
@pytest.mark.parametrize("max_tokens", [8000, 400])
def test_real_docs_chunk_without_losing_text(max_tokens: int) -> None:
    files = sorted(SURVIVAL.rglob("*.md*"))
    assert len(files) > 200
    for path in files:
        meta, body = _load(path)
        chunks = chunk_document(str(path.relative_to(SURVIVAL)), meta, body, max_tokens=max_tokens)
        assert all(c.embedding_text.strip() for c in chunks), path
        oversized = [c for c in chunks if c.token_estimate > max_tokens]
        assert all("single sentence" in (c.warning or "") for c in oversized), path
        everything = "\n".join(c.content for c in chunks)
        squashed = _squash(everything)
        names = _heading_names(chunks)
        uncommented = _HTML_COMMENT.sub("", body)
        for line in body.splitlines():
            if not line.strip() or line.strip() not in uncommented:
                continue  # blank, or inside a comment block
            title = _TITLE_LINE.match(line)
            if title and (title[1] or "").strip() in names:
                continue
            # Lines are whole at 8000 tokens; at 400 a long line may be cut at a sentence end.
            # A comment inside code is kept, one in text is not: either form of the line counts.
            forms = [line, _HTML_COMMENT.sub("", line)]
            found = any(
                form.strip() in everything if max_tokens == 8000 else _squash(form) in squashed
                for form in forms
            )
            assert found, f"{path}: lost {line!r}"


def _heading_names(chunks: list[Chunk]) -> set[str]:
    """Every H1/H2 title the chunks carry, without the ``(i/n)`` of re-split parts."""
    names = {""} | {c.parent_heading for c in chunks}
    for chunk in chunks:
        names |= {re.sub(r" \(\d+/\d+\)$", "", p) for p in chunk.heading_path.split(" > ")}
    return names


@pytest.mark.skipif(not JSQUAD_VAULT.is_dir(), reason="shared/eval/jsquad/vault is missing")
def test_jsquad_vault_has_one_chunk_per_section() -> None:
    files = sorted(JSQUAD_VAULT.glob("*.md"))
    assert len(files) == 59
    total = 0
    for path in files:
        meta, body = _load(path)
        expected, fence = [], False
        for line in body.splitlines():
            fence ^= line.lstrip().startswith(("```", "~~~"))
            if not fence and line.startswith("## "):
                expected.append(line[3:].strip())
        chunks = chunk_document(path.name, meta, body)
        assert _headings(chunks) == expected, path
        assert all(c.parent_heading == meta["title"] and c.warning is None for c in chunks)
        total += len(chunks)
    assert total == 1145


# --- English counterparts and identities ----------------------------------------------------


def test_english_note_follows_the_same_rules() -> None:
    meta = {"title": "Gardening", "tags": ["garden", "#howto"]}
    body = (
        "# Garden notes\n\nWhy I keep a garden. It calms me down!\n\n"
        "## Tomatoes\n\nThey need sun.\n### Watering\nWater at dawn.\n#### Tools\nA can.\n\n"
        "```md\n## not a section\n```\n\n"
        "## Herbs\n\nBasil grows fast.\n"
    )
    intro, tomatoes, herbs = chunk_document("notes/20251230_garden.md", meta, body)
    assert [c.heading for c in (intro, tomatoes, herbs)] == ["Garden notes", "Tomatoes", "Herbs"]
    assert {c.parent_heading for c in (intro, tomatoes, herbs)} == {"Garden notes"}
    assert "### Watering\nWater at dawn.\n#### Tools\nA can." in tomatoes.content
    assert "## not a section" in tomatoes.content
    assert tomatoes.embedding_text == (
        "title:Gardening|tags:garden,howto\n\n"
        "[prev] Why I keep a garden。It calms me down。\n\n"
        "# Garden notes\n\n"
        "## Tomatoes\n\n" + tomatoes.content
    )
    # the previous chunk ends in a code fence: its last two lines are the context
    assert herbs.embedding_text.startswith(
        "title:Gardening|tags:garden,howto\n\n[prev] ## not a section。```。\n\n# Garden notes"
    )


def test_english_oversized_section_is_resplit_at_h3() -> None:
    sub = "Plain words in a sentence. " * 25
    body = f"# Guide\n## Setup\nLead.\n### Install\n{sub}\n### Configure\n{sub}\n"
    chunks = chunk_document("n.md", {}, body, max_tokens=300)
    assert [c.heading for c in chunks] == ["Setup", "Setup > Install", "Setup > Configure"]
    assert all(c.warning is None and c.token_estimate <= 300 for c in chunks)
    assert _squash("".join(c.content for c in chunks)) == _squash(_body_without_titles(body))


@pytest.mark.parametrize(
    ("meta", "body", "parent"),
    [
        ({"title": "Front title"}, "# Heading one\n## S\nx\n", "Heading one"),
        ({"title": "Front title"}, "## S\nx\n", "Front title"),
        ({}, "## S\nx\n", "my-doc"),
    ],
    ids=["h1", "frontmatter", "slug"],
)
def test_english_parent_heading_fallbacks(meta: dict[str, Any], body: str, parent: str) -> None:
    (chunk,) = chunk_document("20251230_my-doc.md", meta, body)
    assert chunk.parent_heading == parent


def test_chunk_ids_are_deterministic_per_document_and_position() -> None:
    from uuid import UUID

    from knowledge_assets.core.index.index_store import chunk_id

    doc = UUID("12345678-1234-5678-1234-567812345678")
    other = UUID("87654321-4321-8765-4321-876543218765")
    assert chunk_id(doc, 0) == chunk_id(doc, 0)
    assert len({chunk_id(doc, 0), chunk_id(doc, 1), chunk_id(other, 0)}) == 3
    assert chunk_id(doc, 3).version == 5


def test_same_text_gives_the_same_hash_in_any_note() -> None:
    body = "# T\n## 節\n同じ本文。\n"
    a = chunk_document("a.md", {"title": "T"}, body)
    b = chunk_document("dir/b.md", {"title": "T"}, body)
    assert [c.text_hash for c in a] == [c.text_hash for c in b]
    c = chunk_document("c.md", {"title": "T", "tags": ["x"]}, body)
    assert c[0].text_hash != a[0].text_hash  # the metadata line is part of the embedded text
