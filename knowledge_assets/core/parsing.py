"""Turn a file's bytes into a document (frontmatter, body, content hash) or a rejection with a reason."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
_BINARY_SNIFF = 8192
_YAML = YAMLHandler()


@dataclass(frozen=True)
class ParsedDoc:
    """A note that parsed cleanly. ``frontmatter`` is JSON-safe."""

    path: str
    frontmatter: dict[str, Any]
    body: str
    content_hash: str


@dataclass(frozen=True)
class Rejection:
    """A file that could not be ingested, and why (shown to the user)."""

    path: str
    reason: str


def content_hash(frontmatter_text: str, body: str) -> str:
    """SHA-256 of frontmatter + ``\\n---\\n`` + body (seed 000's ``compute_content_hash``)."""
    return hashlib.sha256((frontmatter_text + "\n---\n" + body).encode("utf-8")).hexdigest()


def parse_document(
    path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES
) -> ParsedDoc | Rejection:
    """Parse one Markdown file; every failure becomes a ``Rejection`` with a readable reason."""
    if len(data) > max_bytes:
        return Rejection(path, f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit")
    if b"\x00" in data[:_BINARY_SNIFF]:
        return Rejection(path, "binary file (NUL bytes), not Markdown text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Rejection(
            path, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        )
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return Rejection(path, "empty file")
    fm_text, body = _split(text)
    if fm_text is None:
        return ParsedDoc(path, {}, text, content_hash("", text))
    try:
        meta = yaml.safe_load(fm_text) if fm_text.strip() else {}
    except yaml.YAMLError as exc:
        return Rejection(path, f"malformed YAML frontmatter: {_yaml_message(exc)}")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return Rejection(path, f"frontmatter is not a mapping (got {type(meta).__name__})")
    return ParsedDoc(path, json_safe(meta), body, content_hash(fm_text, body))


def _split(text: str) -> tuple[str | None, str]:
    """Split off a leading ``---`` YAML block, as python-frontmatter detects it."""
    if not _YAML.detect(text):
        return None, text
    try:
        fm_text, body = _YAML.split(text)
    except ValueError:
        return None, text
    return fm_text, body


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" (frontmatter line {mark.line + 1}, column {mark.column + 1})" if mark else ""
    return f"{problem}{where}"


def json_safe(value: Any) -> Any:
    """YAML values made storable as JSON: dates become ISO strings, keys strings, NaN None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(json.dumps(value, default=str))
