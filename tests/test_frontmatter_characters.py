"""An invisible character that breaks a frontmatter block is named with the line and column the
author's editor shows, and the fix."""

from __future__ import annotations

import pytest

from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection, parse_document

PREFIX = "malformed YAML frontmatter: "


@pytest.mark.parametrize(
    ("yaml_text", "reason"),
    [
        (
            'title: "a\x07b"',
            "control character U+0007 (line 2, column 10) is not allowed in YAML: delete it",
        ),
        (
            "title: x\x0by",
            "control character U+000B (line 2, column 9) is not allowed in YAML: delete it",
        ),
        (
            "a: 1\nbody: |\n  a\x1b[2Jb",
            "control character U+001B (line 4, column 4) is not allowed in YAML: delete it",
        ),
        (
            "title: a\ufffeb",
            "control character U+FFFE (line 2, column 9) is not allowed in YAML: delete it",
        ),
        (
            "title: a\x85b",
            "next-line character (U+0085) (line 2, column 9), which YAML reads as a line break: delete it, or put the value in double quotes",
        ),
        (
            "tags: [x]\ntitle: 会議\u2028議事録",
            "Unicode line separator (U+2028) (line 3, column 10), which YAML reads as a line break: delete it, or put the value in double quotes",
        ),
    ],
)
def test_a_character_yaml_refuses_is_named_with_its_line_and_fix(
    yaml_text: str, reason: str
) -> None:
    doc = parse_document("a.md", f"---\n{yaml_text}\n---\n# 見出し\n".encode())
    assert isinstance(doc, Rejection)
    assert doc.reason == PREFIX + reason


def test_a_separator_after_where_yaml_stopped_is_not_blamed() -> None:
    doc = parse_document("a.md", "---\ntitle: [x\ndesc: a\u2028b\n---\n".encode())
    assert isinstance(doc, Rejection) and "U+2028" not in doc.reason
    assert "close the `[` of line 2" in doc.reason


def test_a_separator_in_a_value_that_parses_is_kept() -> None:
    doc = parse_document("a.md", '---\ntitle: "a\u2028b"\n---\n'.encode())
    assert isinstance(doc, ParsedDoc) and doc.frontmatter == {"title": "a\u2028b"}
