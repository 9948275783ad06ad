"""Bounded, safe YAML frontmatter: a hostile header is rejected fast and small, never run.

A frontmatter block is data written by hand, so it gets hard limits before and while it is read:

- **size**: at most ``MAX_FRONTMATTER_BYTES``; anything larger is not a note's metadata;
- **nesting**: at most ``MAX_DEPTH`` levels, checked while composing (PyYAML recurses once per
  level, so 5,000 levels would otherwise end in a ``RecursionError``);
- **aliases**: at most ``MAX_ALIASES`` uses of ``*anchor``, an alias may not contain itself, and
  the value once aliases are expanded (what is stored as JSON) may hold at most ``MAX_NODES``
  values and ``MAX_CHARS`` characters, so a few hundred bytes of "billion laughs" stop within
  milliseconds instead of growing without end.

Only the safe YAML types are built (no tag constructs a Python object). Plain values are read
by the YAML 1.2 core schema, as Obsidian reads them (:mod:`.yaml_core`): ``title: no`` is the
text "no", ``time: 12:30`` the text "12:30", not YAML 1.1's false and 750. A value YAML cannot
construct as its type (``created: 2024-13-01``, a 5,000-digit integer) is kept as the text it
was written as, so one odd date never costs the whole note.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import yaml

from knowledge_assets.core.ingest.fullwidth import spaced_key
from knowledge_assets.core.ingest.yaml_core import use_core_schema
from knowledge_assets.core.ingest.yaml_fixes import unused_anchor

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_NODES = 100_000
MAX_CHARS = 1_000_000


class FrontmatterError(ValueError):
    """The frontmatter is over a limit or cannot be read; the message says which and where."""


_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"


def _key_text(value: Any) -> str:
    """A key's YAML value as a JavaScript object key is written, as Obsidian names a property:
    ``true`` and ``null`` (not Python's ``True`` and ``None``), a number as its digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that counts nesting depth and alias uses while composing the node tree."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0
        self.warnings: list[str] = []
        self._checked: set[int] = set()
        # ``title: &anchor`` is valid YAML (an anchor on an empty value) but almost always text
        # that starts with ``&``: a plain value's anchor that no alias uses is reported.
        self._anchored: dict[str, yaml.ScalarEvent] = {}
        self._used: set[str] = set()

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:  # type: ignore[override]
        if id(node) not in self._checked and isinstance(node, yaml.MappingNode):
            # not a mapping (``!!map foo``): PyYAML's own check says so, with the line
            self._checked.add(id(node))
            self._keys_as_text(node)
            self._note_duplicate_keys(node)
            self._note_spaced_keys(node)
        return super().construct_mapping(node, deep)

    def _keys_as_text(self, node: yaml.MappingNode) -> None:
        """Plain keys become the text of their value (:func:`_key_text`) before the mapping is
        built: as Python values, ``1`` and ``true`` were one key (1 == True), so one property
        silently replaced the other."""
        for i, (key, value) in enumerate(node.value):
            if isinstance(key, yaml.ScalarNode) and key.tag not in (_STR, _MERGE):
                text = _key_text(self.construct_object(key))
                node.value[i] = (yaml.ScalarNode(_STR, text, key.start_mark, key.end_mark), value)

    def _note_spaced_keys(self, node: yaml.MappingNode) -> None:
        """Record a plain key written with a full-width space beside it (``title　: x``): YAML
        keeps the space in the key, so ``title`` is not set; the note is kept, as Obsidian
        shows it (a property named ``title　``)."""
        for key, _value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.style is None and "\u3000" in key.value:
                if warning := spaced_key(key.value, _rest_of_line(key.end_mark), key.start_mark.line + 1):  # fmt: skip
                    self.warnings.append(clean_text(warning))

    def _note_duplicate_keys(self, node: yaml.MappingNode) -> None:
        """Record a key written twice in one mapping (``title:`` on line 2 and again on line 5),
        with both lines. The note is kept, with the LAST value, which is what PyYAML builds:

        - Obsidian has no value to match: its YAML parser refuses a mapping with a duplicate key
          and shows the note's properties as invalid, so neither value is taken there;
        - the later key is the one added last, by hand below a template's key or by a plugin
          that appends properties, so it is the likelier to be meant;
        - notes stored before this check kept the last value too: choosing it changes no stored
          note, title or tag, and re-embeds nothing.

        A merge key's keys (``<<: *base`` then ``title:``) are overrides, not duplicates."""
        first: dict[tuple[str, str], int] = {}
        for key, _value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE:
                continue
            line = key.start_mark.line + 1
            # By text: ``1:`` and ``"1":`` name one property (a key is its text).
            seen = first.setdefault(("", key.value), line)
            if seen != line:
                self.warnings.append(
                    f"duplicate frontmatter key `{clean_text(key.value)[:100]}` (lines {seen} and"
                    f" {line}): the last value is kept; Obsidian shows the note's properties as"
                    " invalid"
                )

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._used.add(self.peek_event().anchor)
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise FrontmatterError(f"more than {MAX_ALIASES} aliases{where(mark)}")
            return super().compose_node(parent, index)
        event = self.peek_event()
        if isinstance(event, yaml.ScalarEvent) and event.anchor and event.style is None:
            self._anchored.setdefault(event.anchor, event)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise FrontmatterError(f"nested deeper than {MAX_DEPTH} levels{where(mark)}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def anchor_warnings(self, text: str) -> list[str]:
        """A warning for each plain value's anchor no alias uses, naming its line and the fix."""
        lines = text.split("\n")
        return [
            clean_text(
                unused_anchor(lines[e.start_mark.line], e.start_mark, e.end_mark, name, e.value)
            )
            for name, e in self._anchored.items()
            if name not in self._used and 0 <= e.start_mark.line < len(lines)
        ]

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:  # type: ignore[override]
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError, AttributeError):
            # 2024-13-01, or ``!!timestamp abc`` (no date at all: PyYAML's regex finds no match
            # and it fails on None): kept as written, reported as a bad date
            return str(node.value)


use_core_schema(_BoundedLoader)
_BoundedLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", _BoundedLoader.construct_yaml_timestamp
)


def _rest_of_line(mark: Any) -> str:
    """What follows ``mark`` on its line in the frontmatter (``: 日記`` after a key)."""
    buffer = getattr(mark, "buffer", None)
    if not isinstance(buffer, str):
        return ""
    end = buffer.find("\n", mark.pointer)
    return buffer[mark.pointer : end if end >= 0 else len(buffer)].rstrip("\0")


def where(mark: Any) -> str:
    """`` (line 3, column 1)`` for a YAML mark, or "" without one. The frontmatter handed to
    YAML starts with the newline after the opening ``---``, so YAML's lines are the file's."""
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""


def load(text: str) -> Any:
    """The YAML value of a frontmatter block, within the limits above.

    Raises :class:`FrontmatterError` (a limit) or ``yaml.YAMLError`` (malformed YAML).
    """
    return load_with_warnings(text)[0]


def load_with_warnings(text: str) -> tuple[Any, list[str]]:
    """:func:`load`, and the warnings about the block that cost the note nothing (a key
    written twice, with its lines)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(
            f"frontmatter is {size:,} bytes, over the {MAX_FRONTMATTER_BYTES:,}-byte limit"
        )
    loader = _BoundedLoader(text)
    try:
        data = loader.get_single_data()
        return data, loader.warnings + loader.anchor_warnings(text)
    finally:
        loader.dispose()


class _Budget:
    """Counts values and characters while a YAML value is turned into JSON."""

    def __init__(self, bounded: bool = True) -> None:
        self.nodes = 0
        self.chars = 0
        self.bounded = bounded

    def spend(self, nodes: int, chars: int) -> None:
        self.nodes += nodes
        self.chars += chars
        if not self.bounded:
            return
        if self.nodes > MAX_NODES:
            raise FrontmatterError(
                f"frontmatter expands to more than {MAX_NODES:,} values (aliases of aliases?)"
            )
        if self.chars > MAX_CHARS:
            raise FrontmatterError(
                f"frontmatter expands to more than {MAX_CHARS:,} characters (aliases of aliases?)"
            )


def json_safe(value: Any, *, bounded: bool = True) -> Any:
    """YAML values made storable as JSON in Postgres, within the expansion budget.

    Dates become ISO strings, keys strings, NaN/inf None, binary data text; NUL characters and
    lone surrogates (which ``jsonb`` and UTF-8 cannot hold) become U+FFFD. A value that contains
    itself (``x: &a [*a]``) raises :class:`FrontmatterError`. ``bounded=False`` lifts the
    expansion budget, for values parsed from JSON (which has no aliases to expand).
    """
    if bounded:
        _measure(value, {}, set())
    return _convert(value, _Budget(bounded), set())


def _measure(value: Any, memo: dict[int, tuple[int, int]], open_ids: set[int]) -> tuple[int, int]:
    """(values, characters) of ``value`` once aliases are expanded, without expanding them.

    Aliases are shared objects, so each is measured once (``memo``): a billion-laughs header is
    judged in microseconds, before any copy is made. Raises :class:`FrontmatterError` over the
    limits or on an alias that contains itself.
    """
    if isinstance(value, str | bytes):
        return 0, len(value)
    if not isinstance(value, dict | list | tuple | set):
        return 0, 0
    key = id(value)
    if key in memo:
        return memo[key]
    if key in open_ids:
        raise FrontmatterError("an alias refers to a value that contains it")
    open_ids.add(key)
    nodes, chars = 1 + len(value), 0
    parts = [p for kv in value.items() for p in kv] if isinstance(value, dict) else list(value)
    for part in parts:
        n, c = _measure(part, memo, open_ids)
        nodes, chars = nodes + n, chars + c
        if nodes > MAX_NODES or chars > MAX_CHARS:
            _Budget().spend(nodes, chars)  # raises with the limit that was passed
    open_ids.discard(key)
    memo[key] = (nodes, chars)
    return nodes, chars


def _convert(value: Any, budget: _Budget, open_ids: set[int]) -> Any:
    if isinstance(value, dict | list | tuple | set):
        if id(value) in open_ids:
            raise FrontmatterError("an alias refers to a value that contains it")
        budget.spend(1 + len(value), 0)
        open_ids.add(id(value))
        try:
            if isinstance(value, dict):
                return {
                    clean_text(_key(k, budget, open_ids)): _convert(v, budget, open_ids)
                    for k, v in value.items()
                }
            return [_convert(v, budget, open_ids) for v in value]
        finally:
            open_ids.discard(id(value))
    return _scalar(value, budget)


def _key(key: Any, budget: _Budget, open_ids: set[int]) -> str:
    if isinstance(key, str):
        return key
    converted = _convert(key, budget, open_ids)
    return converted if isinstance(converted, str) else str(converted)


def _scalar(value: Any, budget: _Budget) -> Any:
    if isinstance(value, str):
        budget.spend(0, len(value))
        return clean_text(value)
    if isinstance(value, bytes):
        budget.spend(0, len(value))
        return clean_text(value.decode("utf-8", "replace"))
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float):
        return value
    text = str(value)
    budget.spend(0, len(text))
    return clean_text(text)


def clean_text(text: str) -> str:
    """``text`` without NUL characters or lone surrogates (each becomes U+FFFD).

    An escaped surrogate pair (``"\\ud83d\\ude00"``) is joined into its character first.
    """
    if text.isascii():
        return text.replace("\x00", "\ufffd") if "\x00" in text else text
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return fixed.replace("\x00", "\ufffd")
