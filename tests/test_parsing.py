"""Parsing one file into a document or a rejection with a reason."""

from __future__ import annotations

import pytest

from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection, content_hash, parse_document


def test_frontmatter_and_body_are_split_and_hashed_as_in_seed_000() -> None:
    data = "---\ntitle: 梅雨\ntags: [天気]\ncreated: 2025-06-01\n---\n# 梅雨\n\n本文。\n".encode()
    doc = parse_document("a.md", data)
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {"title": "梅雨", "tags": ["天気"], "created": "2025-06-01"}
    assert doc.body.strip() == "# 梅雨\n\n本文。"
    fm_text = "\ntitle: 梅雨\ntags: [天気]\ncreated: 2025-06-01\n"
    assert doc.content_hash == content_hash(fm_text, doc.body)


def test_no_frontmatter_is_a_plain_body() -> None:
    doc = parse_document("n.md", b"just text\n")
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {}
    assert doc.body == "just text\n"


def test_crlf_and_bom_are_normalised() -> None:
    a = parse_document("a.md", b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\nbody\r\n")
    b = parse_document("a.md", b"---\ntitle: x\n---\nbody\n")
    assert isinstance(a, ParsedDoc) and isinstance(b, ParsedDoc)
    assert a.content_hash == b.content_hash


@pytest.mark.parametrize(
    "data",
    [b"", b" \n\n\t\n", "\u00a0\r\n\u3000".encode(), b"\xef\xbb\xbf"],
    ids=["zero-bytes", "blank", "nbsp-ideographic", "bom-only"],
)
def test_a_cleared_file_is_an_empty_note_not_a_rejection(data: bytes) -> None:
    doc = parse_document("a.md", data)
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {} and not doc.body.strip()


def test_frontmatter_change_changes_the_hash() -> None:
    a = parse_document("a.md", b"---\ntags: [a]\n---\nbody\n")
    b = parse_document("a.md", b"---\ntags: [b]\n---\nbody\n")
    assert isinstance(a, ParsedDoc) and isinstance(b, ParsedDoc)
    assert a.content_hash != b.content_hash


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"---\ntitle: [unclosed\n---\nbody", "malformed YAML frontmatter"),
        (b"---\n- a\n- b\n---\nbody", "frontmatter is not a mapping (got list)"),
        (b"---\njust a string\n---\nbody", "frontmatter is not a mapping (got str)"),
        (b"caf\xe9 au lait", "not valid UTF-8: byte 0xe9 at offset 3; save it as UTF-8"),
        ("# 日記\n\n晴れ".encode("utf-16"), "UTF-16 text, not UTF-8: save it as UTF-8"),
        ("# 日記\n\n晴れ".encode("utf-16-le"), "UTF-16 text (no byte-order mark), not UTF-8"),
        ("# 日記\n\n晴れ".encode("utf-32"), "UTF-32 text, not UTF-8: save it as UTF-8"),
        ("# 日記\n\n晴れ".encode("shift_jis"), "at offset 2 (it reads as Shift_JIS); save it"),
        ("# 日記\n\n晴れ".encode("euc_jp"), "at offset 2 (it reads as EUC-JP); save it"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (b"x" * (10 * 1024 * 1024), "over the 2,097,152-byte limit"),
    ],
    ids=[
        "bad-yaml",
        "list-fm",
        "scalar-fm",
        "non-utf8",
        "utf16",
        "utf16-no-mark",
        "utf32",
        "shift-jis",
        "euc-jp",
        "binary",
        "10mb",
    ],
)
def test_bad_input_is_rejected_with_a_reason(data: bytes, reason: str) -> None:
    result = parse_document("bad.md", data)
    assert isinstance(result, Rejection)
    assert reason in result.reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            b'---\ntitle: "unclosed\nx: 1\n---\nbody',
            "found unexpected end of stream (line 4, column 1),"
            " while scanning a quoted scalar (line 2, column 8):"
            " close the quote opened on line 2",
        ),
        (
            b"---\na: 1\n\tb: 2\n---\nbody",
            "found character '\\t' that cannot start any token (line 3, column 1):"
            " indent with spaces, not tabs",
        ),
    ],
    ids=["unclosed-quote", "tab"],
)
def test_yaml_errors_say_where_in_the_file_and_where_the_construct_began(
    data: bytes, reason: str
) -> None:
    result = parse_document("bad.md", data)
    assert isinstance(result, Rejection)
    assert result.reason == f"malformed YAML frontmatter: {reason}"


# The slips people make in frontmatter, each with the line the fix writes (None: no line to
# write, the fix says what to do).
YAML_SLIPS = [
    ("title: @someone", 'title: "@someone"'),
    ("title: `code`", 'title: "`code`"'),
    ("title: %done", 'title: "%done"'),
    ("title: *important*", 'title: "*important*"'),
    ("title: !important", 'title: "!important"'),
    ("title: | text", 'title: "| text"'),
    ("title: 会議: 議事録", 'title: "会議: 議事録"'),
    ("url: http://example.com/a: b", 'url: "http://example.com/a: b"'),
    ('title: @a "b"', "title: '@a \"b\"'"),
    ("tags:\n  - @work", '- "@work"'),
    ("title: [unclosed", 'title: "[unclosed"'),
    ("title: {x", 'title: "{x"'),
]


@pytest.mark.parametrize(("typed", "fixed"), YAML_SLIPS)
def test_a_yaml_slip_names_the_line_written_as_it_parses(typed: str, fixed: str) -> None:
    note = f"---\n{typed}\nother: 1\n---\nbody".encode()
    result = parse_document("bad.md", note)
    assert isinstance(result, Rejection)
    assert result.reason.endswith(f"quote the value: write `{fixed}`")
    # The line written as the fix says: the note parses, with the value as it was typed.
    lines = typed.split("\n")
    lines[-1] = lines[-1][: len(lines[-1]) - len(lines[-1].lstrip())] + fixed
    doc = parse_document("bad.md", ("---\n" + "\n".join(lines) + "\nother: 1\n---\nbody").encode())
    assert isinstance(doc, ParsedDoc)
    key, _, value = typed.split("\n")[-1].strip().removeprefix("- ").partition(": ")
    got = doc.frontmatter["tags"][0] if typed.startswith("tags") else doc.frontmatter[key]
    assert got == (value or key)


@pytest.mark.parametrize(
    ("yaml_text", "fix"),
    [
        ("tags: [a, b", 'close the `[` of line 2, or quote the value: write `tags: "[a, b"`'),
        ('title: "abc\ntags: a', "close the quote opened on line 2"),
        ("tags:\n  - a\n - b", "indent line 4 as the other lines of its level"),
        ("title: a\n  sub: b", "indent line 3 as the other lines of its level"),
        ("tags:\n- a\nb", "write line 4 as `key: value` or `- item`"),
        ("title: @" + "長" * 100, "put the value of `title:` in quotes"),
    ],
    ids=["open-list", "open-quote", "list-indent", "key-indent", "bare-word", "long-value"],
)
def test_other_yaml_slips_say_what_to_change(yaml_text: str, fix: str) -> None:
    result = parse_document("bad.md", f"---\n{yaml_text}\n---\nbody".encode())
    assert isinstance(result, Rejection)
    assert result.reason.startswith("malformed YAML frontmatter: ")
    assert result.reason.endswith(f": {fix}")


def test_yaml_error_names_the_line() -> None:
    result = parse_document("bad.md", b"---\ntitle: ok\ntags: [a, b\n---\nbody")
    assert isinstance(result, Rejection)
    assert "line" in result.reason


def test_odd_yaml_values_become_json_safe() -> None:
    doc = parse_document("a.md", b"---\n1: one\nwhen: 2025-01-02 03:04:05\nnan: .nan\n---\nx")
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {"1": "one", "when": "2025-01-02T03:04:05", "nan": None}


# What a Japanese input method types into frontmatter: a full-width colon (：) or space (U+3000)
# where YAML needs half-width ones. YAML's own message names another line, or none.
@pytest.mark.parametrize(
    ("yaml_text", "reason"),
    [
        ("title：日記", "line 2 separates `title` from its value with a full-width colon (：):"
         " write `title: 日記`"),
        ("title： 日記", "line 2 separates `title` from its value with a full-width colon (：):"
         " write `title: 日記`"),
        ("tags：日記\ntitle: 題", "line 2 separates `tags` from its value with a full-width"
         " colon (：): write `tags: 日記`"),
        ("title: 題\ntags：日記", "line 3 separates `tags` from its value with a full-width"
         " colon (：): write `tags: 日記`"),
        ("title:\u3000題", "line 2 has a full-width space after `title:`: write `title: 題`"),
        ("title:\u3000題\ntags: [a]", "line 2 has a full-width space after `title:`:"
         " write `title: 題`"),
        ("tags: [a]\ntitle:\u3000題", "line 3 has a full-width space after `title:`:"
         " write `title: 題`"),
        ("title:\u3000\ntags: [a]", "line 2 has a full-width space after `title:`:"
         " write `title:` without it"),
        ("tags:\n\u3000- a", "line 3 is indented with a full-width space: indent with"
         " half-width spaces"),
        ("tags:\n  - a\n\u3000\u3000- b", "line 4 is indented with a full-width space: indent"
         " with half-width spaces"),
    ],
    ids=["colon", "colon-space", "colon-first", "colon-second", "space", "space-first",
         "space-last", "space-no-value", "indent", "indent-after-good"],
)  # fmt: skip
def test_full_width_colon_or_space_is_named_with_its_line_and_the_fix(
    yaml_text: str, reason: str
) -> None:
    result = parse_document("bad.md", f"---\n{yaml_text}\n---\n本文\n".encode())
    assert isinstance(result, Rejection)
    assert result.reason == f"malformed YAML frontmatter: {reason}"


@pytest.mark.parametrize(
    ("yaml_text", "reason"),
    [
        ("title: 第1章：始まり\ntags: [a", "expected ',' or ']'"),
        ("- 第1章：始まり\n- x", "frontmatter is not a mapping (got list)"),
        ("tags: [a\nnote：later", "expected ',' or ']'"),
        ("summary: |\n  \u3000字下げした段落\ntags: [a", "expected ',' or ']'"),
    ],
    ids=["in-a-value", "in-a-list", "after-the-error", "in-a-block-text"],
)
def test_full_width_characters_the_yaml_allows_are_not_blamed(yaml_text: str, reason: str) -> None:
    result = parse_document("bad.md", f"---\n{yaml_text}\n---\n本文\n".encode())
    assert isinstance(result, Rejection)
    assert reason in result.reason and "full-width" not in result.reason


@pytest.mark.parametrize(
    ("yaml_text", "meta"),
    [
        ("title: 第1章：始まり", {"title": "第1章：始まり"}),
        ("title: 題\u3000名", {"title": "題\u3000名"}),
        ("summary: |\n  \u3000字下げ", {"summary": "\u3000字下げ\n"}),
    ],
    ids=["colon-in-value", "space-in-value", "space-in-block-text"],
)
def test_full_width_characters_inside_values_still_parse(
    yaml_text: str, meta: dict[str, str]
) -> None:
    doc = parse_document("ok.md", f"---\n{yaml_text}\n---\n本文\n".encode())
    assert isinstance(doc, ParsedDoc) and doc.frontmatter == meta and doc.warnings == ()


# A full-width space beside a key is no YAML error: the key keeps it (``title　``), and the note
# had no title, unsaid. It is kept, as Obsidian shows it, with a warning naming the line and fix.
@pytest.mark.parametrize(
    ("yaml_text", "warning"),
    [
        ("title\u3000: 日記", "line 2 has a full-width space between `title` and its colon:"
         " write `title: 日記`"),
        ("tags: [a]\ntitle\u3000\u3000: 日記", "line 3 has a full-width space between `title`"
         " and its colon: write `title: 日記`"),
        ("title \u3000 : 日記", "line 2 has a full-width space between `title` and its colon:"
         " write `title: 日記`"),
        ("\u3000title: 日記", "line 2 has a full-width space before `title`: write `title: 日記`"),
        ("tags\u3000:\n  - a", "line 2 has a full-width space between `tags` and its colon:"
         " write `tags:`"),
        ("meta:\n  sub\u3000: 1", "line 3 has a full-width space between `sub` and its colon:"
         " write `sub: 1`"),
    ],
    ids=["before-colon", "second-line", "mixed-spaces", "before-key", "block-value", "nested"],
)  # fmt: skip
def test_a_full_width_space_beside_a_key_keeps_the_note_with_a_warning_and_the_fix(
    yaml_text: str, warning: str
) -> None:
    doc = parse_document("ok.md", f"---\n{yaml_text}\n---\n本文\n".encode())
    assert isinstance(doc, ParsedDoc)
    assert doc.warnings == (f"{warning}; until then it is read as another key than `"
                            f"{warning.split('`')[1]}`",)  # fmt: skip


@pytest.mark.parametrize("yaml_text", ['"title\u3000": 日記', "title: 題\u3000名", "題\u3000名: x"])
def test_a_full_width_space_a_key_is_quoted_with_or_holds_inside_is_no_warning(
    yaml_text: str,
) -> None:
    doc = parse_document("ok.md", f"---\n{yaml_text}\n---\n本文\n".encode())
    assert isinstance(doc, ParsedDoc) and doc.warnings == ()
