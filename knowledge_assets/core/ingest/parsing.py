"""Turn a file's bytes into a document (frontmatter, body, content hash) or a rejection with a reason."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from knowledge_assets.core.ingest import frontmatter
from knowledge_assets.core.ingest.fullwidth import full_width_problem
from knowledge_assets.core.ingest.yaml_chars import character_problem
from knowledge_assets.core.ingest.yaml_fixes import yaml_fix

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
    # What was odd but cost nothing (a frontmatter key written twice): stored with the note,
    # shown by `get` and in the run that read it.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rejection:
    """A file that could not be ingested, and why (shown to the user).

    ``retry``: the file could not be read at all (permissions, a broken link), so its version
    token says nothing; the next sync tries it again instead of skipping it as unchanged.
    """

    path: str
    reason: str
    retry: bool = False


def content_hash(frontmatter_text: str, body: str) -> str:
    """SHA-256 of frontmatter + ``\\n---\\n`` + body (seed 000's ``compute_content_hash``)."""
    return hashlib.sha256((frontmatter_text + "\n---\n" + body).encode("utf-8")).hexdigest()


def parse_document(
    path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES
) -> ParsedDoc | Rejection:
    """Parse one Markdown file; every failure becomes a ``Rejection`` with a readable reason.

    Never raises: an unexpected error is a rejection naming the error, so one odd file cannot
    stop a sync.
    """
    try:
        return _parse(path, data, max_bytes)
    except RecursionError:
        return Rejection(path, "frontmatter nested too deeply to read")
    except Exception as exc:  # whatever one file does, the others must land
        return Rejection(path, f"could not be parsed: {type(exc).__name__}: {exc}"[:500])


def oversized(path: str, data: bytes, max_bytes: int) -> Rejection | None:
    """The rejection of a file over ``max_bytes``, else None (Markdown and bookmark files)."""
    return too_large(path, len(data), max_bytes) if len(data) > max_bytes else None


def too_large(path: str, size: int, max_bytes: int) -> Rejection:
    """The rejection of a file of ``size`` bytes, over ``max_bytes``."""
    return Rejection(path, f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")


# Byte-order marks of encodings a note gets saved in by mistake (UTF-32's little-endian mark
# starts with UTF-16's, so it comes first). Their text is full of NUL bytes: without this check
# it would be called binary.
_WIDE_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
SAVE_AS_UTF8 = "save it as UTF-8"
# Legacy Japanese encodings a vault's older notes may still be in, tried to name the fix.
_LEGACY = (("cp932", "Shift_JIS"), ("euc_jp", "EUC-JP"))
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def wide_text(path: str, data: bytes) -> Rejection | None:
    """The rejection of a UTF-16 or UTF-32 file (by its byte-order mark), else None."""
    for mark, name in _WIDE_MARKS:
        if data.startswith(mark):
            return Rejection(path, f"{name} text, not UTF-8: {SAVE_AS_UTF8}")
    if _utf16_without_mark(data):
        return Rejection(path, f"UTF-16 text (no byte-order mark), not UTF-8: {SAVE_AS_UTF8}")
    return None


def _utf16_without_mark(data: bytes) -> bool:
    """Whether ``data`` is UTF-16 without a byte-order mark: its NUL bytes (the high byte of
    every ASCII character: newlines, spaces, ``#``) all sit on one side of each byte pair, and
    it decodes as UTF-16 of that byte order."""
    head = data[: _BINARY_SNIFF - _BINARY_SNIFF % 2]
    if len(data) % 2 or len(head) < 4:
        return False
    high_first, high_last = head[0::2].count(0), head[1::2].count(0)
    for codec, zeros, others in (
        ("utf-16-be", high_first, high_last),
        ("utf-16-le", high_last, high_first),
    ):
        if others == 0 and zeros >= max(2, len(head) // 64):
            try:
                data.decode(codec)
            except UnicodeDecodeError:
                return False
            return True
    return False


def utf8_text(path: str, data: bytes) -> str | Rejection:
    """The file's text (a UTF-8 byte-order mark dropped), or a rejection naming the first
    byte that is not UTF-8, where it is, and the encoding the file reads as if it is a legacy
    Japanese one."""
    if wide := wide_text(path, data):
        return wide
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        return Rejection(path, f"not valid UTF-8: {where}{_legacy_name(data)}; {SAVE_AS_UTF8}")


def _legacy_name(data: bytes) -> str:
    """`` (it reads as Shift_JIS)`` when the bytes decode as Japanese text in that encoding.

    EUC-JP bytes can also decode as Shift_JIS (as half-width kana and stray kanji): the codec
    that yields the most kana and kanji wins.
    """
    best, found = "", 0
    for codec, name in _LEGACY:
        try:
            count = len(_JAPANESE.findall(data.decode(codec)))
        except UnicodeDecodeError:
            continue
        if count > found:
            best, found = name, count
    return f" (it reads as {best})" if best else ""


def _parse(path: str, data: bytes, max_bytes: int) -> ParsedDoc | Rejection:
    if too_big := oversized(path, data, max_bytes):
        return too_big
    if wide := wide_text(path, data):
        return wide
    nul = data.find(b"\x00")
    if 0 <= nul < _BINARY_SNIFF:
        return Rejection(path, "binary file (NUL bytes), not Markdown text")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return Rejection(path, f"NUL byte at offset {nul:,} (line {line}): not Markdown text")
    text = utf8_text(path, data)
    if isinstance(text, Rejection):
        return text
    # An emptied file (0 bytes, or only blanks) is a cleared note, stored as an empty note:
    # rejecting it would keep the old text searchable.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fm_text, body = _split(text)
    if fm_text is None:
        return ParsedDoc(path, {}, text, content_hash("", text))
    try:
        meta, warnings = frontmatter.load_with_warnings(fm_text) if fm_text.strip() else ({}, [])
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            if problem := full_width_problem(fm_text):
                return Rejection(path, f"malformed YAML frontmatter: {problem}")
            return Rejection(path, f"frontmatter is not a mapping (got {type(meta).__name__})")
        safe = frontmatter.json_safe(meta)
    except frontmatter.FrontmatterError as exc:
        return Rejection(path, f"frontmatter rejected: {exc}")
    except yaml.YAMLError as exc:
        return Rejection(path, f"malformed YAML frontmatter: {_yaml_message(exc, fm_text)}")
    return ParsedDoc(path, safe, body, content_hash(fm_text, body), tuple(warnings))


# The first line opens frontmatter only when it is exactly ``---`` (trailing blanks allowed), as
# Obsidian and CommonMark's YAML extensions read it: ``----`` or longer is a horizontal rule, and
# python-frontmatter, which takes any run of three or more dashes, would read the prose under a
# note's opening rule as YAML (rejecting the note, or making its text frontmatter).
_OPENER = re.compile(r"---[ \t]*(?:\n|$)")


def _split(text: str) -> tuple[str | None, str]:
    """Split off a leading ``---`` YAML block, closed as python-frontmatter closes it."""
    if not _OPENER.match(text) or not _YAML.detect(text):
        return None, text
    try:
        fm_text, body = _YAML.split(text)
    except ValueError:
        return None, text
    return fm_text, body


def _yaml_message(exc: yaml.YAMLError, fm_text: str) -> str:
    """YAML's problem and where it is, and what it was reading when that began: an unclosed
    quote is found only at the end of the frontmatter, but began where the quote opens. A
    full-width colon or space before the construct YAML was reading is named instead: YAML
    blames another line (inside an unclosed ``[`` or quote, a full-width colon is just text)."""
    mark = getattr(exc, "problem_mark", None)
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    stop = start or mark
    if problem := full_width_problem(fm_text, stop.line if stop else None):
        return problem
    if problem := character_problem(exc, fm_text):
        return problem
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    message = f"{problem}{frontmatter.where(mark)}"
    if context and start is not None and (mark is None or start.line != mark.line):
        message += f", {context}{frontmatter.where(start)}"
    fix = yaml_fix(exc, fm_text)
    return f"{message}: {fix}" if fix else message
