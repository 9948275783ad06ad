"""Strict tool arguments: an unknown argument is refused, and a bad value is reported in one line.

The SDK builds each tool's argument model from the function's signature and lets pydantic
ignore unknown keys, so a misspelt ``limt`` or ``tag`` ran the tool with its defaults (for a
filter, an unfiltered search that looked like a filtered one). :func:`strict_tool` forbids
them, which also publishes ``additionalProperties: false`` in the input schema, and words
pydantic's multi-line report as one line naming the argument and what it accepts, read off the
published schema so the message and what a client sees agree.

Only the top-level argument model is made strict here. An object argument (a pydantic model in
a tool's signature) must set ``extra="forbid"`` itself; its unknown keys are then named by their
path, ``filters.tg``, with the keys that object accepts.

Text holding a NUL is refused the same way, by the argument's name, before any query.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from knowledge_assets.core.chunks.chunk_text import VISIBLE_PATTERN

# What a ``pattern`` of the schema means, for the patterns the tools use.
_PATTERNS = {r"\S": "non-blank", VISIBLE_PATTERN: "non-blank"}
_PLURALS = {"string": "strings", "integer": "whole numbers", "number": "numbers",
            "boolean": "true/false values", "object": "objects"}  # fmt: skip
_SHOWN_CHARS = 60
T = TypeVar("T", bound=BaseModel)


class StrictTool(Tool):
    """A tool whose argument errors are one line; :func:`strict_tool` builds it."""

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        if problem := nul_problem(self.name, arguments):
            raise ToolError(f"Error executing tool {self.name}: {problem}")
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            problem = argument_problem(self.name, self.parameters, arguments, cause)
            # The cause stays attached: the server logs the rejected field names from it.
            raise ToolError(f"Error executing tool {self.name}: {problem}") from cause


def strict_tool(fn: Callable[..., Any], **options: Any) -> Tool:
    """The SDK's tool for ``fn`` (``options`` as for ``Tool.from_function``), refusing unknown
    arguments and publishing ``additionalProperties: false``."""
    tool = StrictTool.from_function(fn, **options)
    strict = strict_model(tool.fn_metadata.arg_model)
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def nul_problem(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """The first argument whose text holds a NUL, in one line, or None. No note, tag, path or
    source holds one (Postgres text cannot), so the call is refused here, by the argument's
    name, rather than by the store in its own words."""
    for name, value in arguments.items():
        if any("\x00" in text for text in _texts(value)):
            return (
                f"bad argument {name!r} for {tool}: it holds a NUL character (\\u0000), which no"
                " note, tag, path or source does: remove it"
            )
    return None


def _texts(value: Any) -> Iterator[str]:
    """The strings in an argument's value, in lists and objects too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


def argument_problem(
    tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any], exc: ValidationError
) -> str:
    """The first problem of ``exc`` in one line (and how many more there are), e.g.
    ``unknown argument 'limt' for search_docs; did you mean 'limit'?`` or
    ``bad argument 'limit' for search_docs: 0 is not a whole number from 1 to 50``.

    An unknown argument comes first: ``path`` for ``file_path`` also leaves ``file_path``
    missing, and the misspelling is the one problem to report (its missing twin is not counted)."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    problem, meant = _one_problem(tool, schema, arguments, errors[0])
    rest = [e for e in errors[1:] if not (e["type"] == "missing" and _name(e) == meant)]
    return problem + (f" (and {len(rest)} more)" if rest else "")


def _name(error: ErrorDetails) -> str:
    # A list item's problem is reported for the whole list: "tags" rather than "tags.0".
    return ".".join(str(p) for p in _until_index(error["loc"]))


def _one_problem(
    tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any], error: ErrorDetails
) -> tuple[str, str | None]:
    """The problem in words, and for an unknown argument the accepted one it is closest to."""
    name = _name(error)
    path = name.split(".")
    if error["type"] == "extra_forbidden":
        keys = list(_at(schema, schema, path[:-1]).get("properties", {}))
        inside = f" in {'.'.join(path[:-1])}" if len(path) > 1 else ""
        close = difflib.get_close_matches(path[-1], keys, n=1)
        if close:
            meant = ".".join([*path[:-1], close[0]])
            return f"unknown argument {name!r} for {tool}; did you mean {meant!r}?", meant
        accepted = f"accepted{inside}: {', '.join(keys)}" if keys else f"{tool} takes no arguments"
        return f"unknown argument {name!r} for {tool}; {accepted}", None
    allowed = describe(_at(schema, schema, path), schema)
    if error["type"] == "missing":
        return f"missing argument {name!r} for {tool}: pass {allowed}", None
    shown = _shown(_value_at(arguments, path))
    return f"bad argument {name!r} for {tool}: {shown} is not {allowed}", None


def _until_index(loc: Sequence[int | str]) -> list[int | str]:
    out: list[int | str] = []
    for part in loc:
        if isinstance(part, int):
            break
        out.append(part)
    return out


def _resolved(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with a ``$ref`` followed and an optional (``anyOf`` with null) unwrapped."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        node = root.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    options = [o for o in node.get("anyOf", ()) if o.get("type") != "null"]
    return _resolved(options[0], root) if len(options) == 1 else node


def _at(node: Mapping[str, Any], root: Mapping[str, Any], path: Sequence[str]) -> Mapping[str, Any]:  # fmt: skip
    """The schema of the argument at ``path`` (object keys from the top)."""
    for key in path:
        node = _resolved(node, root).get("properties", {}).get(key, {})
    return _resolved(node, root)


def describe(node: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """What a JSON schema accepts, in words: ``a whole number from 1 to 50``, ``one of a, b``."""
    node = _resolved(node, root)
    if "enum" in node:
        return "one of " + ", ".join(str(v) for v in node["enum"])
    if "anyOf" in node:
        return " or ".join(describe(o, root) for o in node["anyOf"] if o.get("type") != "null")
    kind = node.get("type")
    if kind in ("integer", "number"):
        noun = "a whole number" if kind == "integer" else "a finite number"
        low, high = node.get("minimum"), node.get("maximum")
        span = _span(low, high)
        if not span:
            return noun
        return f"{noun} {'from' if low is not None and high is not None else 'of'} {span}"
    if kind == "string":
        blank = _PATTERNS.get(node.get("pattern", ""), "")
        # Non-blank text has at least one character: a minLength of 1 says nothing more.
        low = node.get("minLength") if not blank or node.get("minLength", 0) > 1 else None
        span = _span(low, node.get("maxLength"))
        return f"{blank} text".lstrip() + (f" of {span} characters" if span else "")
    if kind == "array":
        return _describe_list(node, _resolved(node.get("items", {}), root))
    if kind == "boolean":
        return "true or false"
    return "an object" if kind == "object" else "a JSON value"


def _describe_list(node: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    """``a list of at most 100 strings of at most 200 characters each``, ``a list of at most 2
    values, each one of a, b``."""
    many = f"at most {node['maxItems']} " if node.get("maxItems") is not None else ""
    if "enum" in item:
        return f"a list of {many}values, each one of " + ", ".join(str(v) for v in item["enum"])
    noun = _PLURALS.get(item.get("type", ""), "values")
    long = item.get("maxLength")
    return f"a list of {many}{noun}" + (f" of at most {long} characters each" if long else "")


def _span(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"at least {low}"
    return f"at most {high}" if high is not None else ""


def _value_at(arguments: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = arguments
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _shown(value: Any) -> str:
    """The value as the caller sent it (JSON), shortened."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def strict_model(model: type[T]) -> type[T]:
    """``model`` refusing unknown keys, NaN/Infinity and values of another JSON type; a
    subclass keeps the fields, so the SDK's JSON pre-parsing still finds them.

    Strict: pydantic would otherwise read ``"3"`` and ``true`` as a limit of 3 and 1, and
    ``"yes"`` or ``1`` as true, so a client's mistake ran as some other call. A list sent as
    JSON text still works: the SDK parses it before validation."""
    return type(model.__name__, (model,), {
        "__module__": model.__module__,
        "model_config": ConfigDict(extra="forbid", allow_inf_nan=False, strict=True),
    })  # fmt: skip
