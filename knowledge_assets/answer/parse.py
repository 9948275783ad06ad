"""Step 5 of seed 001's pipeline: read the model's answer, whatever shape it came in.

The model is asked for JSON, but models wrap it in code fences, add prose around it, leave
trailing commas, stop mid-object or ignore the format. Parsing tries, in order: the whole text as
JSON; the first balanced ``{...}`` object (fences and prose dropped), also with trailing commas
removed; the ``"answer"`` string field alone; the text as a prose answer. ``parsed`` says which.

What the model's JSON escapes may not be text: half of a surrogate pair (``\\ud83d`` alone, a
character outside the Basic Multilingual Plane cut in two) cannot be encoded for a reply, and a
NUL cannot be kept in the history. The answer shows U+FFFD for the half and drops the NUL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("low", "medium", "high")
_RELEVANCE = {"高": "high", "中": "medium", "低": "low", "high": "high", "medium": "medium", "low": "low"}  # fmt: skip
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*$", re.MULTILINE)
_SURROGATE = re.compile("[\ud800-\udfff]")  # one left in a decoded str has lost its pair


def clean_text(text: str) -> str:
    """``text`` as Unicode that can be shown and stored: a lone surrogate becomes U+FFFD and a
    NUL is dropped."""
    return _SURROGATE.sub("\ufffd", text).replace("\x00", "")


@dataclass
class ModelAnswer:
    """What the model said: answer text, cited sources, its own confidence, how it was read."""

    answer: str
    sources: list[dict[str, str]] = field(default_factory=list)
    confidence: str | None = None
    parsed: str = "json"  # json | repaired | answer-field | prose


def _objects(text: str) -> list[str]:
    """Balanced ``{...}`` substrings, outermost first, respecting JSON strings."""
    found: list[str] = []
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            esc, in_str = (False, in_str) if esc else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return found


def _load(candidate: str) -> tuple[dict[str, Any] | None, bool]:
    """The object with an ``answer`` field in ``candidate``, and whether commas were repaired."""
    for text, repaired in ((candidate, False), (_TRAILING_COMMA.sub(r"\1", candidate), True)):
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and "answer" in value:
            return value, repaired
    return None, False


def _level(value: Any) -> str | None:
    text = str(value or "").strip().lower()
    return _RELEVANCE.get(text)


def _sources(value: Any) -> list[dict[str, str]]:
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            item = {"noteId": item}
        if not isinstance(item, dict):
            continue
        note_id = clean_text(str(item.get("noteId") or item.get("note_id") or item.get("id") or "")).strip()  # fmt: skip
        title = clean_text(str(item.get("noteTitle") or item.get("title") or "")).strip()
        if note_id or title:
            out.append({"noteId": note_id, "noteTitle": title, "relevance": _level(item.get("relevance")) or "medium"})  # fmt: skip
    return out


def _from_dict(value: dict[str, Any], how: str) -> ModelAnswer:
    return ModelAnswer(
        answer=clean_text(str(value.get("answer") or "")).strip(),
        sources=_sources(value.get("sources")),
        confidence=_level(value.get("confidence")),
        parsed=how,
    )


def parse_model_answer(text: str) -> ModelAnswer:
    """The model's answer from its raw text; never raises."""
    stripped = text.strip()
    whole, repaired = _load(stripped)
    if whole is not None:
        return _from_dict(whole, "repaired" if repaired else "json")
    for candidate in _objects(_FENCE.sub("", stripped)):
        value, _ = _load(candidate)
        if value is not None:
            return _from_dict(value, "repaired")
    field_match = _ANSWER_FIELD.search(stripped)
    if field_match:
        return ModelAnswer(
            answer=decode_partial(field_match.group(1)).strip(), parsed="answer-field"
        )
    return ModelAnswer(answer=clean_text(_FENCE.sub("", stripped)).strip(), parsed="prose")


def decode_partial(body: str) -> str:
    """A JSON string body (no quotes), possibly cut off mid-escape, decoded as far as it goes:
    a pair's first half at the end waits for its second (the next chunk may bring it)."""
    for cut in range(len(body), max(len(body) - 6, -1), -1):
        try:
            decoded: str = json.loads('"' + body[:cut] + '"')
        except ValueError:
            continue
        if decoded and "\ud800" <= decoded[-1] <= "\udbff":
            decoded = decoded[:-1]
        return clean_text(decoded)
    return body


class AnswerStreamer:
    """Turns the model's streamed JSON into the answer text as it grows, for live display.

    ``feed`` takes each raw chunk and returns the new answer text it revealed. Until the answer
    field appears nothing is shown; a reply that does not start as JSON is shown as it comes.
    """

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""

    def feed(self, chunk: str) -> str:
        self.raw += chunk
        head = self.raw.lstrip()
        if head and not head.startswith(("{", "`")):
            current = clean_text(head)
        else:
            match = _ANSWER_FIELD.search(self.raw)
            current = decode_partial(match.group(1)) if match else ""
        if not current.startswith(self.shown):
            return ""
        new, self.shown = current[len(self.shown) :], current
        return new
