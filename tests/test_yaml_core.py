"""Frontmatter values are read as Obsidian reads them, by the YAML 1.2 core schema: what YAML 1.1
made a boolean or a number (``no``, ``on``, ``12:30``, ``1_000``) is text, ``0123`` is 123."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pytest
import yaml

from knowledge_assets.core.ingest import frontmatter
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document

# Plain scalars YAML 1.1 (PyYAML's SafeLoader) reads otherwise: (value read, value stored).
CHANGED: dict[str, tuple[Any, Any]] = {
    # booleans are only true/false
    "no": ("no", "no"),
    "yes": ("yes", "yes"),
    "No": ("No", "No"),
    "YES": ("YES", "YES"),
    "on": ("on", "on"),
    "off": ("off", "off"),
    "On": ("On", "On"),
    "OFF": ("OFF", "OFF"),
    # integers: decimal (no 1.1 octal), 0o octal, 0x hex without a sign; no _, 0b or base 60
    "0123": (123, 123),
    "-0123": (-123, -123),
    "0o17": (15, 15),
    "-0x1F": ("-0x1F", "-0x1F"),
    "0b101": ("0b101", "0b101"),
    "1_000": ("1_000", "1_000"),
    "12:30": ("12:30", "12:30"),
    "190:20:30": ("190:20:30", "190:20:30"),
    # floats need no dot before an exponent, nor a sign in it
    "1e3": (1000.0, 1000.0),
    "1.0e5": (100000.0, 100000.0),
    "+.5": (0.5, 0.5),
    "1_000.5": ("1_000.5", "1_000.5"),
    "12:30.5": ("12:30.5", "12:30.5"),
    "1e999": (math.inf, None),
    # YAML 1.1's "value" key, which PyYAML cannot build: the note was rejected
    "=": ("=", "="),
}
# Plain scalars both read alike: kept as they were.
SAME: dict[str, tuple[Any, Any]] = {
    "true": (True, True),
    "True": (True, True),
    "FALSE": (False, False),
    "tRUE": ("tRUE", "tRUE"),
    "y": ("y", "y"),
    "~": (None, None),
    "null": (None, None),
    "Null": (None, None),
    "NULL": (None, None),
    "": (None, None),
    "nULL": ("nULL", "nULL"),
    "+12": (12, 12),
    "0": (0, 0),
    "0x1F": (31, 31),
    "0xff": (255, 255),
    "0o18": ("0o18", "0o18"),
    "0x": ("0x", "0x"),
    "1.5": (1.5, 1.5),
    ".5": (0.5, 0.5),
    "1.": (1.0, 1.0),
    "-2.5E-3": (-0.0025, -0.0025),
    ".inf": (math.inf, None),  # JSON has no infinity
    "-.Inf": (-math.inf, None),
    "+.INF": (math.inf, None),
    ".NaN": (math.nan, None),
    ".nAn": (".nAn", ".nAn"),
    "1.2.3": ("1.2.3", "1.2.3"),
}


def _same(value: Any, expected: Any) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(value, float) and math.isnan(value)
    return bool(value == expected) and type(value) is type(expected)


def _yaml_1_1(scalar: str) -> Any:
    try:
        return yaml.safe_load(f"v: {scalar}")["v"]
    except yaml.YAMLError as exc:
        return exc


@pytest.mark.parametrize("scalar", sorted(CHANGED))
def test_a_plain_value_reads_as_obsidian_reads_it(scalar: str) -> None:
    expected, stored = CHANGED[scalar]
    assert not _same(_yaml_1_1(scalar), expected)  # the case is one YAML 1.1 reads otherwise
    value = frontmatter.load(f"v: {scalar}")["v"]
    assert _same(value, expected)
    assert frontmatter.json_safe({"v": value}) == {"v": stored}


@pytest.mark.parametrize("scalar", sorted(SAME))
def test_a_plain_value_both_yamls_agree_on_is_kept(scalar: str) -> None:
    expected, stored = SAME[scalar]
    assert _same(_yaml_1_1(scalar), expected)
    value = frontmatter.load(f"v: {scalar}")["v"]
    assert _same(value, expected)
    assert frontmatter.json_safe({"v": value}) == {"v": stored}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"no"', "no"),
        ("'0123'", "0123"),
        ("!!str 12", "12"),
        ("!!int 0123", 123),
        ("!!int 0x10", 16),
        ("!!int 0b101", "0b101"),
        ("!!int 1_000", "1_000"),
        ("!!float 1_0.5", "1_0.5"),
        ("!!float 2", 2.0),
        ("!!bool yes", "yes"),
        ("!!bool TRUE", True),
        ("!!null ''", None),
    ],
)
def test_quoted_and_tagged_values_follow_yaml_1_2_too(text: str, expected: Any) -> None:
    value = frontmatter.load(f"v: {text}")["v"]
    assert value == expected and type(value) is type(expected)


def test_keys_read_as_values_do() -> None:
    loaded = frontmatter.load("yes: a\non: b\n12:30: c\n0123: d\ntrue: e\n1_000: f")
    assert frontmatter.json_safe(loaded) == {
        "yes": "a",
        "on": "b",
        "12:30": "c",
        "123": "d",
        "true": "e",  # as a JavaScript object names it, as Obsidian does
        "1_000": "f",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-05", dt.date(2024, 1, 5)),
        ("2024-01-05T10:30:00Z", dt.datetime(2024, 1, 5, 10, 30, tzinfo=dt.UTC)),
        ("2024-01-05 10:30:00", dt.datetime(2024, 1, 5, 10, 30)),
        ("2024-01-05 10:30", "2024-01-05 10:30"),
        ("2024-13-01", "2024-13-01"),
    ],
)
def test_dates_read_as_they_always_were(text: str, expected: Any) -> None:
    """YAML 1.2 has no timestamps; every stored note's dates were read by YAML 1.1's rule."""
    assert frontmatter.load(f"created: {text}") == {"created": expected}


def test_a_merge_key_still_merges() -> None:
    loaded = frontmatter.load("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2")
    assert loaded["m"] == {"x": 1, "y": 2}


def test_pyyaml_keeps_yaml_1_1_for_everyone_else() -> None:
    """Only the frontmatter loader changed: other code using PyYAML's loaders reads as before."""
    frontmatter.load("v: no")
    assert yaml.safe_load("v: no\nt: 12:30\nn: 1_000") == {"v": False, "t": 750, "n": 1000}
    assert yaml.load("v: on", Loader=yaml.SafeLoader) == {"v": True}


@pytest.mark.parametrize(
    ("line", "key", "stored"),
    [
        ("title: no", "title", "no"),
        ("title: 12:30", "title", "12:30"),
        ("id: 0123", "id", 123),
        ("aliases: [on, off]", "aliases", ["on", "off"]),
        ("tags: [yes, 1_000]", "tags", ["yes", "1_000"]),
    ],
)
def test_a_note_stores_what_obsidian_shows(line: str, key: str, stored: Any) -> None:
    parsed = parse_document("n.md", f"---\n{line}\n---\n# 題\n\n本文\n".encode())
    assert isinstance(parsed, ParsedDoc)
    assert parsed.frontmatter[key] == stored
    assert json.loads(json.dumps(parsed.frontmatter))[key] == stored
