"""Frontmatter conventions: which notes are drafts and which keys hold a note's dates.

Vaults disagree: Hugo and Jekyll write ``draft: true``, Astro and Eleventy ``published: false``;
Obsidian templates write ``created``/``updated``, JavaScript tools ``createdAt``/``updatedAt``,
blogs a single ``date``. Both are configurable; the defaults accept all of these. For dates the
first key present wins, and a value that is not a calendar date (``2024-13-01``) leaves the date
empty and is reported, never fatal.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}

DEFAULT_DRAFT_MARKERS = ("draft=true", "published=false")
DEFAULT_CREATED_KEYS = ("created", "createdAt", "date")
DEFAULT_UPDATED_KEYS = ("updated", "updatedAt", "date")


@dataclass(frozen=True)
class Conventions:
    """``draft_markers``: ``key=true`` or ``key=false`` entries, any match makes a draft.
    ``created_keys`` / ``updated_keys``: the keys tried in order for each date."""

    draft_markers: Sequence[str] = DEFAULT_DRAFT_MARKERS
    created_keys: Sequence[str] = DEFAULT_CREATED_KEYS
    updated_keys: Sequence[str] = DEFAULT_UPDATED_KEYS

    def __post_init__(self) -> None:
        for marker in self.draft_markers:
            key, _, value = marker.partition("=")
            if not key.strip() or value.strip().lower() not in ("true", "false"):
                raise ValueError(f"draft marker {marker!r} must look like 'draft=true'")

    def draft_marker(self, frontmatter: Mapping[str, Any]) -> str | None:
        """The marker that makes this note a draft (e.g. ``published: false``), or None."""
        for marker in self.draft_markers:
            key, _, wanted = (part.strip() for part in marker.partition("="))
            if key in frontmatter and _as_bool(frontmatter[key]) is (wanted.lower() == "true"):
                return f"{key}: {wanted.lower()}"
        return None

    def created(self, frontmatter: Mapping[str, Any]) -> DateField:
        return _first_date(frontmatter, self.created_keys)

    def updated(self, frontmatter: Mapping[str, Any]) -> DateField:
        return _first_date(frontmatter, self.updated_keys)

    def date_warnings(self, frontmatter: Mapping[str, Any]) -> list[str]:
        """A line for each date the note's frontmatter names but that is not one."""
        found = (self.created(frontmatter), self.updated(frontmatter))
        return [bad_date(f.key, f.raw) for f in found if f.unparseable and f.key]


def bad_date(key: str, value: Any) -> str:
    """``created: 2024-13-01`` in backticks, then ``is not a date (YYYY-MM-DD); left empty``."""
    return f"`{key}: {str(value)[:100]}` is not a date (YYYY-MM-DD); left empty"


@dataclass(frozen=True)
class DateField:
    """The key a date was read from (None: no key present), its value and the parsed date."""

    key: str | None
    raw: Any = None
    date: dt.date | None = None

    @property
    def unparseable(self) -> bool:
        return self.key is not None and self.raw is not None and self.date is None


def parse_date(value: Any) -> dt.date | None:
    """A ``YYYY-MM-DD`` date (optionally followed by a time), or None when it is not one."""
    if not isinstance(value, str):
        return None
    match = _DATE.match(value)
    if not match:
        return None
    try:
        return dt.date(*(int(part) for part in match.groups()))
    except ValueError:
        return None


def _first_date(frontmatter: Mapping[str, Any], keys: Sequence[str]) -> DateField:
    for key in keys:
        if key in frontmatter and frontmatter[key] not in (None, ""):
            return DateField(key, frontmatter[key], parse_date(frontmatter[key]))
    return DateField(None)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        return True if text in _TRUE else False if text in _FALSE else None
    return None
