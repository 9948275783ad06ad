"""Article bookmarks as JSON files (seed 004 §3.3): a category with a list of saved articles.

```json
{"heading": "ai", "description": "AIについて",
 "body": [{"title": "…", "url": "https://…", "ogTitle": "…", "ogDescription": "…", "quote": "…"}]}
```

A file becomes one document: the top-level fields other than ``body`` are its frontmatter
(``heading`` becomes ``top_heading``) and the stored content is the ``body`` list as JSON. Each
``body`` element is one chunk (see :func:`bookmark_sections`). A file that is not such an object
is rejected with the reason, like a bad Markdown file.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from knowledge_assets.core.ingest.frontmatter import json_safe
from knowledge_assets.core.ingest.parsing import (
    DEFAULT_MAX_BYTES,
    ParsedDoc,
    Rejection,
    content_hash,
    oversized,
    utf8_text,
)

BOOKMARK_SUFFIXES = (".json",)
_TEXT_FIELDS = ("title", "url", "ogTitle", "ogDescription", "quote")


@dataclass(frozen=True)
class Bookmark:
    """One saved article: ``text`` is what gets embedded and searched."""

    title: str
    url: str | None
    text: str


def parse_bookmarks(
    path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES
) -> ParsedDoc | Rejection:
    """Parse one bookmark JSON file; every failure becomes a ``Rejection`` with a reason."""
    if too_big := oversized(path, data, max_bytes):
        return too_big
    text = utf8_text(path, data)
    if isinstance(text, Rejection):
        return text
    if not text.strip():
        # A cleared file is an empty note (no bookmarks), not a rejection that would keep
        # the old bookmarks searchable.
        return ParsedDoc(path, {}, "", content_hash("{}", ""))
    try:
        value = json.loads(text, parse_int=_integer)
        problem = _shape_problem(value)
        if problem:
            return Rejection(path, f"not a bookmark file: {problem}")
        entries, skipped = _usable(value["body"])
        if skipped and not entries:  # nothing in it is a bookmark: keep the last good version
            return Rejection(path, f"not a bookmark file: {skipped[0]}")
        meta = json_safe({k: v for k, v in value.items() if k != "body"}, bounded=False)
        body = json.dumps(
            json_safe(entries, bounded=False), ensure_ascii=False, indent=1, sort_keys=True
        )
    except json.JSONDecodeError as exc:
        return Rejection(path, f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
    except RecursionError:
        # Reading, cleaning or writing back a value some hundreds of levels deep: it was
        # "could not be parsed: RecursionError: maximum recursion depth exceeded ...".
        return Rejection(path, "not a bookmark file: arrays or objects nested too deeply")
    meta_text = json.dumps(meta, ensure_ascii=False, sort_keys=True)
    return ParsedDoc(path, meta, body, content_hash(meta_text, body), _skip_warnings(skipped))


def _integer(digits: str) -> int | str:
    """A JSON integer; one too long for Python to convert (over 4,300 digits) stays as the text
    written, as in frontmatter, instead of rejecting the file with advice about the interpreter."""
    try:
        return int(digits)
    except ValueError:
        return digits


def _shape_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"the top level is a JSON {_json_type(value)}, not an object"
    body = value.get("body")
    if not isinstance(body, list):
        return "'body' is missing or not a list"
    return None


def _usable(body: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries of ``body`` that are bookmarks, and what is wrong with each other one. One
    bad entry used to reject the whole file, and every good bookmark in it with it."""
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    for i, item in enumerate(body):
        if not isinstance(item, dict):
            skipped.append(f"body[{i}] is a JSON {_json_type(item)}, not an object")
            continue
        bad = [k for k in _TEXT_FIELDS if item.get(k) is not None and not isinstance(item[k], str)]
        if bad:
            skipped.append(f"body[{i}].{bad[0]} is not a string")
        elif not any(str(item.get(k) or "").strip() for k in _TEXT_FIELDS):
            skipped.append(f"body[{i}] has no {', '.join(_TEXT_FIELDS[:-1])} or {_TEXT_FIELDS[-1]}")
        else:
            entries.append(item)
    return entries, skipped


_WARNED = 5  # skipped entries named one by one; the rest are counted


def _skip_warnings(skipped: list[str]) -> tuple[str, ...]:
    named = tuple(f"{problem}: the entry is left out" for problem in skipped[:_WARNED])
    rest = len(skipped) - _WARNED
    return named + (
        (f"{rest:,} more entries are left out for the same kinds of reason",) if rest > 0 else ()
    )


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class _Article:
    """One saved article of a stored ``body``, its texts stripped."""

    title: str
    og_title: str
    description: str
    quote: str
    url: str

    @property
    def name(self) -> str:
        """What the article is called: its title, else its page's title, else its address."""
        return self.title or self.og_title or self.url

    @property
    def other_title(self) -> str:
        """The page's own title when it says more than the title ("" when the same)."""
        return self.og_title if self.og_title != self.title else ""


def _articles(content: str) -> list[_Article]:
    """The articles of a stored ``body`` (JSON), as they were saved."""
    fields = ("title", "ogTitle", "ogDescription", "quote", "url")
    return [
        _Article(*(str(item.get(k) or "").strip() for k in fields))
        for item in json.loads(content or "[]")
    ]


def bookmark_sections(content: str) -> list[Bookmark]:
    """The bookmarks of a stored ``body``: text = title, ogTitle (when it differs),
    ogDescription and quote, one per line (seed 004 §3.3). An article saved twice in one file
    (the same url and text) is one bookmark: each copy was a chunk of its own, and a search
    listed the same article twice."""
    out: list[Bookmark] = []
    seen: set[tuple[str | None, str]] = set()
    for a in _articles(content):
        parts = (a.title, a.other_title, a.description, a.quote)
        url = a.url or None
        text = "\n".join(p for p in parts if p)
        if (url, text) in seen:
            continue
        seen.add((url, text))
        out.append(Bookmark(title=a.name, url=url, text=text or a.url))
    return out


# What a <…> link destination cannot hold: written %-encoded, as a browser would send them.
_UNSAFE_IN_LINK = re.compile(r"[<>\s]")
# Characters Markdown would read as markup in a title or description written as text.
_MARKUP = re.compile(r"([\\`*_\[\]<>#|~!&])")


def bookmarks_markdown(content: str) -> str:
    """A bookmark file's stored ``body`` as Markdown to read: each article a ``##`` heading,
    a link to its address when it has one, its description, and its quote as a block quote.
    The texts are escaped, so a title holding ``[``, ``*`` or ``<b>`` shows as written."""
    parts = []
    for a in _articles(content):
        lines = [f"## {_as_text(a.name) or '(無題)'}"]
        if a.url:
            address = _UNSAFE_IN_LINK.sub(lambda m: urllib.parse.quote(m[0], safe=""), a.url)
            lines.append(f"[{_as_text(a.url)}](<{address}>)")
        if a.title and a.other_title:  # without a title, the page's title is the heading
            lines.append(f"**{_as_text(a.other_title)}**")
        if a.description:
            lines.append(_as_text(a.description))
        if a.quote:
            lines.append("\n".join(f"> {_as_text(line)}" for line in a.quote.splitlines()))
        parts.append("\n\n".join(lines))
    return "\n\n".join(parts) + "\n" if parts else ""


def _as_text(text: str) -> str:
    return " ".join(_MARKUP.sub(r"\\\1", line) for line in text.splitlines())
