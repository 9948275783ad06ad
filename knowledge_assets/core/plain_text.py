"""A note's Markdown (and MDX) as plain text, for snippets and heading paths shown in result lists:
the command line's and the MCP server's (the search page's ``cleanText`` in ``markup.js`` drops the
same markers).

A snippet is read, not rendered: ``[any型](../any.md)`` reads as ``any型``, an image as its alt
text, and fence lines (with their info strings, ``ts twoslash``), twoslash directives, heading
marks, HTML and JSX tags, inline-code backticks, quote and callout markers, highlights and block
ids are left out, and so is the text of ``<script>`` and ``<style>`` elements, which the note view
never shows. Code inside fences and backticks is kept as written, so ``Array<T>`` there is
not taken for a tag.
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Iterator

from knowledge_assets.core.chunks.markdown import code_spans
from knowledge_assets.core.search.search_hits import snippet

# [ \t]*, not \s*: \s also matches newlines, and on a run of blank lines every line start would
# scan the whole run again (quadratic; 80,000 newlines took 36 s).
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_SITE_FENCE = re.compile(r"^[ \t]*:::")  # :::tip, :::details (documentation sites)
# Twoslash directives in TypeScript samples: "// @errors: 2339", "// @noErrors", "//    ^?".
_TWOSLASH = re.compile(r"^[ \t]*//[ \t]*(?:@\w+(?::.*)?|\^\?.*)$")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?:\[![^\]\s]+\][+-]?[ \t]*)?")
_LINK_DEFINITION = re.compile(r"^[ \t]{0,3}\[[^\]^][^\]]*\]:[ \t]+\S+.*$")
_FOOTNOTE_DEFINITION = re.compile(r"^[ \t]{0,3}\[\^[^\]]+\]:[ \t]*")
_MARKERS = re.compile(r"[\[<=*^]")
# A <script> or <style> element's text is code the note view hides; "<style/>" opens nothing.
_HIDDEN_OPEN = re.compile(r"<(script|style)(?:[ \t][^<>]*)?(?<!/)>", re.IGNORECASE)
_HIDDEN_CLOSE = {tag: re.compile(rf"</{tag}[ \t]*>", re.IGNORECASE) for tag in ("script", "style")}
# Inline markers, in the order they are replaced: embeds and images before links, since an image
# may be a link's text ([![](a.svg)](a.svg)). No bracket or parenthesis may stand inside another
# here: each match then ends at the next one, and a line of ten thousand "[" is read in linear
# time, not quadratic.
_INLINE = [
    (re.compile(r"!\[\[[^\[\]\n]*\]\]"), ""),  # Obsidian embed: a file, no text
    (re.compile(r"!\[([^\[\]\n]*)\](?:\([^()\n]*\)|\[[^\[\]\n]*\])?"), r"\1"),  # image: alt text
    (re.compile(r"\[\[[^\[\]|\n]*\|([^\[\]\n]*)\]\]"), r"\1"),  # [[note|shown]]
    (re.compile(r"\[\[([^\[\]\n]*)\]\]"), r"\1"),  # [[note]]
    (re.compile(r"\[\^[^\[\]\s]+\]"), ""),  # footnote reference
    (
        re.compile(r"\[([^\[\]\n]*)\](?:\([^()\n]*\)|\[[^\[\]\n]*\])"),
        r"\1",
    ),  # [text](url), [text][ref]
    # An HTML or JSX tag: a closing one, or a name right after "<" with no identifier before it
    # (Array<T> is a type, 型<br> a line break).
    (
        re.compile(
            r"</[A-Za-z][\w.:-]*[ \t]*>|(?<![A-Za-z0-9_$])<[A-Za-z][\w.:-]*(?:\s[^<>\n]*)?/?>"
        ),
        "",
    ),
    (re.compile(r"==([^\s=](?:[^=\n]*[^\s=])?)=="), r"\1"),  # highlight
    (re.compile(r"\*\*([^*\n]+)\*\*"), r"\1"),  # strong
    (re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$"), ""),  # block id
]


def plain_inline(text: str) -> str:
    """One line of Markdown as the words it shows: code spans keep their text without the
    backticks, and links, images, tags and emphasis markers outside them are resolved."""
    out: list[str] = []
    at = 0
    for start, end, inner in code_spans(text):
        out.append(_resolve(text[at:start]))
        out.append(inner.strip() or inner)
        at = end
    out.append(_resolve(text[at:]))
    return "".join(out)


def _resolve(text: str) -> str:
    if not _MARKERS.search(text):  # most of a note's lines: nothing to replace
        return text
    text = _drop_comments(text)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def _drop_comments(text: str) -> str:
    """``text`` without ``<!-- ... -->`` (a regular expression would rescan after each opener)."""
    out: list[str] = []
    at = 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        out.append(text[at:start])
        at = end + 3
    out.append(text[at:])
    return "".join(out)


def _heading_text(line: str) -> str:
    """A heading line without its ``#`` marks, leading and closing (``### t ###``)."""
    line = _HEADING.sub("", line).rstrip(" \t")
    body = line.rstrip("#")
    if body != line and (not body or body[-1] in " \t"):
        return body.rstrip(" \t")
    return line


def plain_text(text: str | None) -> str:
    """A note's Markdown as plain lines (see the module's docstring)."""
    return "\n".join(_plain_lines(text or ""))


def _plain_lines(text: str) -> Iterator[str]:
    fence, hidden = "", ""
    for line in text.split("\n"):
        if hidden:  # a script's text is its own to its close, fence marks and all
            line, hidden = _unhidden(line, hidden)
            if hidden:
                continue
        opened = _FENCE.match(line)
        if fence:
            if opened and opened[1] == fence:
                fence = ""
            elif not _TWOSLASH.match(line):
                yield line
            continue
        if opened:
            fence = opened[1]
            continue
        if _SITE_FENCE.match(line) or _LINK_DEFINITION.match(line):
            continue
        if "<" in line:  # not in a fence: there, <script> is code shown as written
            line, hidden = _unhidden(line, "")
        line = _FOOTNOTE_DEFINITION.sub("", _QUOTE.sub("", line))
        if _HEADING.match(line):
            line = _heading_text(line)
        yield plain_inline(line)


def _unhidden(line: str, hidden: str) -> tuple[str, str]:
    """``line`` without the text of the ``<script>`` / ``<style>`` elements in it, and the tag
    still open at its end ("" for none). ``hidden``: the tag open before it. A tag inside a code
    span (`` `<style>` ``) is code shown as written, and opens nothing."""
    out: list[str] = []
    at = 0
    # Once per line: a line of many `<style>` is then read in linear time.
    code = [(start, end) for start, end, _ in code_spans(line)] if "`" in line else []
    while True:
        if hidden:
            close = _HIDDEN_CLOSE[hidden].search(line, at)
            if close is None:
                return "".join(out), hidden
            at, hidden = close.end(), ""
        found = _HIDDEN_OPEN.finditer(line, at)
        opener = next((m for m in found if not _inside(code, m.start())), None)
        if opener is None:
            return "".join(out) + line[at:], ""
        out.append(line[at : opener.start()])
        at, hidden = opener.end(), opener[1].lower()


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether ``at`` is inside one of ``spans`` (in order, not overlapping)."""
    i = bisect.bisect_right(spans, (at, sys.maxsize)) - 1
    return i >= 0 and at < spans[i][1]


def plain_snippet(text: str | None, limit: int) -> str:
    """``text`` as plain text on one line, cut at ``limit`` characters with an ellipsis. Only
    the lines the snippet needs are cleaned: a hit's passage may be long."""
    taken: list[str] = []
    size = 0
    for line in _plain_lines(text or ""):
        taken.append(line)
        size += len(line) + 1
        if size > 2 * limit:  # folded spaces shorten it, so take some more than the limit
            break
    return snippet("\n".join(taken), limit)


def plain_heading(heading: str | None) -> str:
    """A heading or heading path (``a > b``) as it reads: ``![js]`` is ``js``, code spans lose
    their backticks, and spaces are folded."""
    return " ".join(plain_inline(heading or "").split())


def plain_doc(text: str | None) -> str:
    """A docstring for a help text or a tool description: reStructuredText's doubled backticks
    around code become the single ones the rest of the help uses."""
    return re.sub(r"``(.+?)``", r"`\1`", text or "")
