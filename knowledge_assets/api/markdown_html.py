"""Raw HTML in a note, as Obsidian and documentation sites show it: the tags of an allowlist
(``<ruby>``, ``<br>``, ``<sub>``, ``<kbd>``, ``<details><summary>``, ``<figure><img>``, tables…)
render, everything else never does.

No sanitizer library is a dependency, so the HTML is never passed through: stdlib's
:class:`html.parser.HTMLParser` reads it, and the output is written anew from escaped text and
the allowed tags with their allowed attributes only (no ``on…`` handler, no ``style``, no
``class``, no ``id`` that could take the name of one of the page's own elements). A link's
address goes through markdown-it's check (no ``javascript:``, ``vbscript:``, ``file:`` or
``data:`` but images) and, when it names a note or an image of the vault, to the note view or the
image, as a Markdown link does. Scripts, styles, ``<head>``, ``<title>`` and the like are left out
with their text; an ``<iframe>`` becomes a link to its page. Any other tag is shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock, html_block
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline, html_inline
from markdown_it.token import Token

from knowledge_assets.api.markdown_images import image_html, is_image
from knowledge_assets.core.links.resolve import NoteLinks

__all__ = ["raw_html", "render_closed"]

_GLOBAL = frozenset({"title", "lang", "dir"})
_TAGS: dict[str, frozenset[str]] = {
    **{t: frozenset() for t in (
        "b i u s em strong small mark cite q code var samp kbd sub sup del ins dfn wbr br "
        "ruby rt rp rb span p div blockquote pre hr ul li dl dt dd figure figcaption summary "
        "table thead tbody tfoot tr caption center"
    ).split()},
    "abbr": frozenset(), "time": frozenset({"datetime"}), "ol": frozenset({"start", "reversed"}),
    "details": frozenset({"open"}), "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "th": frozenset({"colspan", "rowspan", "align"}), "td": frozenset({"colspan", "rowspan", "align"}),
    **{f"h{n}": frozenset() for n in range(1, 7)},
}  # fmt: skip
_VOID = frozenset({"br", "hr", "img", "wbr"})
# Left out together with their text: never shown, and their text is no part of the note's.
_HIDDEN = frozenset(
    "script style head title template noscript noembed noframes textarea xmp iframe object "
    "svg math select option frameset".split()
)
# Raw elements a note may leave open at once: what is open keys the cache of rendered tags, and a
# note of thousands of unclosed <b> would otherwise make each lookup as long as the note.
_MAX_OPEN = 64
_NUMBER = frozenset({"width", "height", "start", "colspan", "rowspan"})
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")
Link = Callable[[str], str | None]  # a link's address as the note view serves it, or None


class _Writer(HTMLParser):
    """Writes the allowed part of the HTML it is fed, every text escaped."""

    def __init__(self, links: NoteLinks, link: Link, opened: list[str] | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.links, self.link = links, link
        self.out: list[str] = []
        self.hidden = 0  # inside this many hidden elements
        # The allowed elements the note's raw HTML opened and has not closed, across its pieces:
        # a close that matches none is dropped, so a note's </div> cannot close the page's box
        # around it (an embed, a callout), and what stays open is closed where the note ends.
        self.opened = [] if opened is None else opened

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, dict(attrs), closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, dict(attrs), closed=True)

    def _open(self, tag: str, attrs: dict[str, str | None], *, closed: bool) -> None:
        if tag == "iframe" and not self.hidden:
            self.out.append(_frame_link(attrs.get("src") or "", self.link))
        if tag in _HIDDEN:
            self.hidden += 0 if closed else 1
            return
        if self.hidden:
            return
        if tag not in _TAGS:
            self.out.append(escapeHtml(self.get_starttag_text() or ""))
        elif tag not in _VOID and not closed and len(self.opened) >= _MAX_OPEN:
            return  # nested this deep, a note's markup is noise: its text still shows
        elif tag == "img":
            self.out.append(self._image(attrs))
        else:
            self.out.append(f"<{_shifted(tag)}{self._attrs(tag, attrs)}>")
            if tag in _VOID:
                return
            if closed:  # <div/> is no void element: it opens and closes at once
                self.out.append(f"</{_shifted(tag)}>")
            else:
                self.opened.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif self.hidden or tag in _VOID:
            return
        elif tag in _TAGS:
            if tag in self.opened:  # close it, and what was left open inside it
                while self.opened:
                    inner = self.opened.pop()
                    self.out.append(f"</{_shifted(inner)}>")
                    if inner == tag:
                        break
        else:
            self.out.append(escapeHtml(f"</{tag}>"))

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.out.append(escapeHtml(data))

    def _attrs(self, tag: str, attrs: dict[str, str | None]) -> str:
        kept = []
        for name, value in attrs.items():
            if name not in _GLOBAL and name not in _TAGS[tag]:
                continue
            if name in _NUMBER and not (value or "").strip().isdigit():
                continue
            if name == "href":
                web, value = _web(value or ""), self.link(value or "")
                if value is None:
                    continue
                if web:
                    kept.append(' rel="noopener noreferrer"')
            kept.append(f' {name}="{escapeHtml(value or "")}"' if value else f" {name}")
        return "".join(kept)

    def _image(self, attrs: dict[str, str | None]) -> str:
        src, alt = (attrs.get("src") or "").strip(), attrs.get("alt") or ""
        width, height = (_number(attrs.get(k)) for k in ("width", "height"))
        # A path as an address writes it (``my%20pic.png``: Notion and Typora export so).
        path = unquote(src.partition("#")[0].partition("?")[0])
        if is_image(path) and not _web(src):
            return image_html(self.links, path, alt, relative=True, width=width, height=height)
        if not _web(src) and not src.lower().startswith("data:image/"):
            return escapeHtml(alt)
        checked = self.link(src)
        if checked is None:
            return escapeHtml(alt)
        sizes = "".join(f' {k}="{v}"' for k, v in (("width", width), ("height", height)) if v)
        return f'<img src="{escapeHtml(checked)}" alt="{escapeHtml(alt)}"{sizes} loading="lazy" />'


def _number(value: str | None) -> str | None:
    value = (value or "").strip()
    return value if value.isdigit() else None


def _web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://", "//"))


def _shifted(tag: str) -> str:
    """A heading one level down, as the note's Markdown headings are (the title is the h1)."""
    if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
        return f"h{min(int(tag[1]) + 1, 6)}"
    return tag


def _frame_link(src: str, link: Link) -> str:
    """An embedded page (a video, a map) as a link to it: no frame of another site runs here."""
    href = link(src) if _web(src) else None
    if href is None:
        return ""
    return f'<a href="{escapeHtml(href)}" rel="noopener noreferrer">埋め込み: {escapeHtml(src)}</a>'


def sanitize(html: str, links: NoteLinks, link: Link, opened: list[str] | None = None) -> str:
    """The allowed part of ``html``, written anew; ``opened``: the elements earlier pieces of the
    note left open (updated)."""
    writer = _Writer(links, link, opened)
    try:
        writer.feed(html)
        writer.close()
    except AssertionError:  # Python 3.11's parser asserts on some declarations (<![x[): text
        return escapeHtml(html)
    return "".join(writer.out)


# Comments are the comment rules' (markdown_comments); one they leave is unclosed, and stays text
# like a declaration or processing instruction: markdown-it would take the rest of the note for
# it (all of it lost), and look for its close again from each one (quadratic time).
_NOT_TAGS = ("<!", "<?")


def _html_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if state.src.startswith(_NOT_TAGS, state.bMarks[start] + state.tShift[start]):
        return False
    return html_block(state, start, end, silent)


def _html_inline(state: StateInline, silent: bool) -> bool:
    if state.src.startswith(_NOT_TAGS, state.pos):
        return False
    return html_inline(state, silent)


def _hide_inline(state: StateCore) -> None:
    """Leave out the text between an inline ``<script>`` (``<style>``, ``<title>``…) and its
    close, as the block of one is: each inline tag is read on its own. Markdown's own opening
    and closing tokens stay (a link or emphasis holding ``<title>`` with no close): dropped, the
    link was never closed and every later paragraph became part of it."""
    for block in state.tokens:
        kept, hidden = [], 0
        for token in block.children or []:
            tag = _tag(token.content) if token.type == "html_inline" else None
            if tag and tag.lstrip("/") in _HIDDEN:
                if tag.startswith("/"):
                    hidden = max(0, hidden - 1)
                elif not token.content.endswith("/>"):
                    hidden += 1
                kept.append(token)  # rendered as nothing (an iframe: a link to its page)
            elif not hidden or token.nesting != 0:
                kept.append(token)
                # The element cannot outlive the link or emphasis it was opened in.
                hidden = 0 if token.nesting < 0 else hidden
        if block.children:
            block.children = kept


def _tag(html: str) -> str | None:
    """The name of the tag ``html`` opens (``/name`` for a close), or None."""
    match = _TAG.match(html)
    return (match[1] + match[2]).lower() if match else None


_OPENED = "raw_html_opened"
_RUN_START, _RUN_END, _RUN_DEPTHS = "raw_html_run_start", "raw_html_run_end", "raw_html_depths"


# Boxes whose raw HTML is closed with them: a quote, a callout, a list item.
_BOXES = ("blockquote", "callout", "container_callout", "list_item")
_BOX_OPENS = {f"{box}_open" for box in _BOXES}
_BOX_CLOSES = {f"{box}_close" for box in _BOXES}


def _mark_runs(state: StateCore) -> None:
    """Mark where each run of inline text holding raw HTML begins and ends, so that what its tags
    open is closed at its end: Obsidian shows each paragraph on its own, and an unclosed ``<b>``
    must not make the rest of the note bold. A box (a callout, a quote, a list item) is such a
    run too: a ``<div>`` or ``<details>`` left open in a callout swallowed the rest of the note
    into its box (or folded it away with it)."""
    for block in state.tokens:
        if block.children and any(t.type == "html_inline" for t in block.children):
            block.children = [Token(_RUN_START, "", 0), *block.children, Token(_RUN_END, "", 0)]
    if not any(t.type == "html_block" for t in state.tokens):
        return
    marked: list[Token] = []
    for token in state.tokens:
        if token.type in _BOX_CLOSES:
            marked.append(Token(_RUN_END, "", 0))
        marked.append(token)
        if token.type in _BOX_OPENS:
            marked.append(Token(_RUN_START, "", 0))
    state.tokens = marked


def _run_start(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:  # fmt: skip
    env.setdefault(_RUN_DEPTHS, []).append(len(env.setdefault(_OPENED, [])))
    return ""


def _run_end(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:  # fmt: skip
    """Close what the run opened and left open (a close in the run may have closed more)."""
    opened: list[str] = env.setdefault(_OPENED, [])
    depth = env[_RUN_DEPTHS].pop()
    left = opened[depth:]
    del opened[depth:]
    return _closing(left)


def render_closed(md: MarkdownIt, text: str, env: dict[str, Any]) -> str:
    """``md``'s HTML of ``text``, with the elements its raw HTML left open closed at its end."""
    return md.render(text, env) + _closing(env.get(_OPENED, []))


def _closing(opened: Sequence[str]) -> str:
    """The end tags of ``opened`` elements, the last opened first."""
    return "".join(f"</{_shifted(tag)}>" for tag in reversed(opened))


def raw_html(md: MarkdownIt, link: Callable[[MarkdownIt, NoteLinks, str], str | None]) -> None:
    """Render the allowed raw HTML of what ``md`` renders; ``link`` gives a link's address."""

    def render(
        renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
    ) -> str:
        links, content = env["links"], tokens[idx].content
        opened: list[str] = env.setdefault(_OPENED, [])
        # A note of thousands of one tag (<br>, <b>) reads each once in each state of what is open.
        done = env.setdefault("raw_html", {}) if tokens[idx].type == "html_inline" else {}
        key = (content, tuple(opened))
        if key not in done:
            after = list(opened)
            done[key] = (sanitize(content, links, lambda href: link(md, links, href), after), after)
        html, after = done[key]
        opened[:] = after
        runs = env.get(_RUN_DEPTHS)
        if runs and len(opened) < runs[-1]:
            # It closed an element opened before its run (``</div>``): what the run opens next
            # sits where that one was, and is the run's to close.
            runs[-1] = len(opened)
        return str(html)

    md.block.ruler.at("html_block", _html_block, {"alt": ["paragraph", "reference", "blockquote"]})
    md.inline.ruler.at("html_inline", _html_inline)
    md.core.ruler.after("inline", "hidden_html", _hide_inline)
    md.core.ruler.push("raw_html_runs", _mark_runs)
    for kind in ("html_block", "html_inline"):
        md.add_render_rule(kind, render)
    md.add_render_rule(_RUN_START, _run_start)
    md.add_render_rule(_RUN_END, _run_end)
