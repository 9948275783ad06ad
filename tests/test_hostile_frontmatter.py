"""Hostile frontmatter: each input is parsed or rejected with a reason, never raises, stays small.

Every case here crashed or hung a sync before frontmatter was bounded; each is reproduced first.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from knowledge_assets.core.ingest import frontmatter
from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection, parse_document

BILLION_LAUGHS = (
    b'---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    b"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n---\nbody\n"
)
SIX_LEVELS = (
    b"---\na: &a " + b'"' + b"x" * 80 + b'"\n'
    b"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n---\nbody\n"
)


def _fm(yaml_text: str) -> bytes:
    return f"---\n{yaml_text}\n---\n# Note\n\nbody\n".encode("utf-8", "surrogatepass")


REJECTED = {
    "nested-5000-flow": (_fm("x: " + "[" * 5000 + "]" * 5000), "nested deeper than 32 levels"),
    "nested-5000-maps": (_fm("x: " + "{a: " * 5000 + "1" + "}" * 5000), "nested deeper"),
    "self-alias": (_fm("x: &a [*a]"), "alias refers to a value that contains it"),
    "self-alias-map": (_fm("x: &a {y: *a}"), "contains it"),
    "billion-laughs": (BILLION_LAUGHS, "expands to more than"),
    "six-level-laughs": (SIX_LEVELS, "expands to more than"),
    "too-many-aliases": (_fm("a: &a 1\nb: [" + ",".join(["*a"] * 150) + "]"), "more than 100"),
    "python-object": (_fm('x: !!python/object/apply:os.system ["echo hi"]'), "malformed YAML"),
    "python-name": (_fm("x: !!python/name:os.system"), "malformed YAML"),
    "custom-tag": (_fm("x: !shout hello"), "malformed YAML"),
    "unhashable-key": (_fm("? [a, b]\n: c"), "malformed YAML"),
    "huge-frontmatter": (_fm("x: " + "y" * 70_000), "over the 65,536-byte limit"),
    "nul-after-8kb": (b"# Note\n" + b"x\n" * 5000 + b"\x00 tail\n", "NUL byte at offset 10,007"),
    "nul-at-start": (b"\x00\x01binary", "binary file"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_hostile_frontmatter_is_rejected_with_a_reason(case: str) -> None:
    data, reason = REJECTED[case]
    tracemalloc.start()
    try:
        result = parse_document(f"{case}.md", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(result, Rejection), result
    assert reason in result.reason
    assert peak < 16 * 1024 * 1024, f"{case} used {peak:,} bytes"


ACCEPTED = {
    "created-month-13": ("created: 2024-13-01", {"created": "2024-13-01"}),
    "updated-zeros": ("updated: 0000-00-00", {"updated": "0000-00-00"}),
    "feb-30": ("date: 2024-02-30 10:00:00", {"date": "2024-02-30 10:00:00"}),
    "nul-in-title": ('title: "a\\0b"', {"title": "a\ufffdb"}),
    "lone-surrogate": ('title: "\\ud800"', {"title": "\ufffd"}),
    "escaped-pair": ('title: "\\ud83d\\ude00"', {"title": "😀"}),
    "nul-in-key": ('"k\\0": 1', {"k\ufffd": 1}),
    "huge-int": ("n: " + "9" * 5000, {"n": "9" * 5000}),
    "inf-nan": ("a: .inf\nb: -.inf\nc: .nan", {"a": None, "b": None, "c": None}),
    # YAML 1.2 reads 1e999 as a float too (YAML 1.1 wanted a dot): both overflow to null
    "float-overflow": ("x: 1.0e+999\ny: 1e999", {"x": None, "y": None}),
    "binary-tag": ("b: !!binary aGVsbG8=", {"b": "hello"}),
    # PyYAML fails on None when an explicit !!timestamp holds no date at all
    "timestamp-tag-no-date": ("c: !!timestamp abc\nd: !!timestamp ''", {"c": "abc", "d": ""}),
    "duplicate-keys": ("t: one\nt: two", {"t": "two"}),
    "non-string-keys": ("10: a\ntrue: b\nnull: c\n2.5: d", {"10": "a", "true": "b", "null": "c"}),
    "set-tag": ("s: !!set {a, b}", None),
    "omap": ("o: !!omap [{a: 1}, {b: 2}]", {"o": [["a", 1], ["b", 2]]}),
    "merge-key": ("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2", None),
    "few-aliases": ("a: &a [1, 2]\nb: [*a, *a]", {"a": [1, 2], "b": [[1, 2], [1, 2]]}),
    "huge-list": ("l: [" + ",".join(["1"] * 20_000) + "]", None),
    "huge-string": ("s: " + "あ" * 20_000, None),
    "depth-30": ("x: " + "[" * 30 + "]" * 30, None),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_odd_but_valid_frontmatter_is_ingested_storably(case: str) -> None:
    yaml_text, expected = ACCEPTED[case]
    result = parse_document(f"{case}.md", _fm(yaml_text))
    assert isinstance(result, ParsedDoc), result
    stored = json.dumps(result.frontmatter, ensure_ascii=False)
    stored.encode("utf-8")  # Postgres receives UTF-8: no lone surrogate survives
    assert "\\u0000" not in stored and "\x00" not in stored  # jsonb refuses NUL
    if expected is not None:
        for key, value in expected.items():
            assert result.frontmatter[key] == value


def test_json_safe_budget_counts_expanded_values_not_source_bytes() -> None:
    shared = ["x" * 1000] * 10
    with pytest.raises(frontmatter.FrontmatterError, match="characters"):
        frontmatter.json_safe({"k": [shared] * 200})
    assert frontmatter.json_safe({"k": [shared] * 50})["k"][49][9] == "x" * 1000


def test_an_unexpected_error_is_a_rejection_not_a_crash() -> None:
    # a str subclass whose .encode fails stands for any bug deep in parsing
    result = parse_document("odd.md", memoryview(b"# x\n"))  # type: ignore[arg-type]
    assert isinstance(result, Rejection)
    assert "could not be parsed" in result.reason
