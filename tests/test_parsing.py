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
            " while scanning a quoted scalar (line 2, column 8)",
        ),
        (
            b"---\na: 1\n\tb: 2\n---\nbody",
            "found character '\\t' that cannot start any token (line 3, column 1)",
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


def test_yaml_error_names_the_line() -> None:
    result = parse_document("bad.md", b"---\ntitle: ok\ntags: [a, b\n---\nbody")
    assert isinstance(result, Rejection)
    assert "line" in result.reason


def test_odd_yaml_values_become_json_safe() -> None:
    doc = parse_document("a.md", b"---\n1: one\nwhen: 2025-01-02 03:04:05\nnan: .nan\n---\nx")
    assert isinstance(doc, ParsedDoc)
    assert doc.frontmatter == {"1": "one", "when": "2025-01-02T03:04:05", "nan": None}
