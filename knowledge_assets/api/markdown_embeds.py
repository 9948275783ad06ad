"""Embedded notes in the note view: a paragraph holding only ``![[note]]`` or
``![[note#heading]]`` shows that note, or that section of it, in a box with a link to it, as
Obsidian's reading view does.

Bounded, so that no note makes the page heavy or endless:

- one level: the notes a note embeds show their own embeds as links (a note embedding itself,
  or two notes embedding each other, end there);
- at most ``MAX_EMBEDS`` per note, each cut at ``MAX_EMBED_CHARS``; further ones are links;
- an embedded note's headings carry no ids (they would repeat the page's own).

Anything else (an image, which shows itself, an attachment, a block ``#^id``, a note that does not exist, an embed
inside a sentence) stays what it was: a link or a missing embed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from knowledge_assets.api.attachments import is_image
from knowledge_assets.api.markdown_html import render_closed
from knowledge_assets.core.chunks.markdown import headings
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks

__all__ = ["MAX_EMBEDS", "MAX_EMBED_CHARS", "Loader", "embeds"]

MAX_EMBEDS = 10
MAX_EMBED_CHARS = 20_000
Loader = Callable[[LinkTarget], str | None]  # the body of a current note, or None
Href = Callable[[NoteLinks, LinkTarget, str], str]
Label = Callable[[str, str | None, bool], str]


def section(content: str, heading: str) -> str | None:
    """The part of ``content`` under the heading titled ``heading`` (case-insensitive), up to
    the next heading of its level or above; None when no heading has that title."""
    wanted = heading.strip().lower()
    found = headings(content)
    lines = content.split("\n")
    for n, (index, level, title) in enumerate(found):
        if title.strip().lower() == wanted:
            end = next((i for i, lv, _ in found[n + 1 :] if lv <= level), len(lines))
            return "\n".join(lines[index:end])
    return None


def _only_embed(tokens: list[Token], i: int) -> Token | None:
    """The wikilink embed that is all of the paragraph whose text is ``tokens[i]``, if any."""
    if i == 0 or tokens[i - 1].type != "paragraph_open" or tokens[i - 1].hidden:
        return None
    kids = [
        c for c in tokens[i].children or []
        if c.type != "softbreak" and not (c.type == "text" and not c.content.strip())
    ]  # fmt: skip
    if len(kids) == 1 and kids[0].type == "wikilink" and kids[0].meta.get("embed"):
        return kids[0]
    return None


def _mark_embeds(state: StateCore) -> None:
    """Turn each paragraph that is one embed of a note into an ``note_embed`` block."""
    if state.env.get("load_note") is None:
        return
    tokens, taken = state.tokens, 0
    for i in range(1, len(tokens) - 1):
        link = _only_embed(tokens, i)
        name, _, heading = link.meta["target"].partition("#") if link else ("", "", "")
        named = link is not None and name.strip() and not is_image(name)  # an image shows itself
        # A superseded version is not shown in place: its link leads to its page, which says
        # what replaced it.
        note = state.env["links"].resolve(name, older=False) if named else None
        if link is None or note is None or heading.startswith("^") or taken == MAX_EMBEDS:
            continue
        if state.env["links"].is_here(note):  # the note itself is on the page already
            continue
        taken += 1
        tokens[i - 1].type, tokens[i + 1].type = "note_embed", "note_embed_close"
        tokens[i - 1].meta = link.meta | {"note": note, "heading": heading.rsplit("#", 1)[-1]}
        tokens[i].children = []


def _body(load: Loader, note: LinkTarget, heading: str) -> str:
    """The Markdown the box shows: the note or its section (cut at ``MAX_EMBED_CHARS``), or a
    line saying why there is none."""
    content = load(note)
    if content is None:
        return "（このノートは今は読めません）"
    if heading.strip():
        content = section(content, heading)
        if content is None:
            return "（この見出しはありません）"
    return content[:MAX_EMBED_CHARS] + "\n\n…" if len(content) > MAX_EMBED_CHARS else content


def embeds(md: MarkdownIt, href: Href, label: Label) -> None:
    """Show notes that a paragraph embeds alone, in what ``md`` renders when the environment
    has a ``load_note`` loader; ``href`` and ``label`` are the note view's link address and text."""

    def render(
        renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
    ) -> str:
        token = tokens[idx]
        if token.type == "note_embed_close":
            return "</div>\n"
        meta, links = token.meta, env["links"]
        note, heading = meta["note"], meta["heading"]
        title = escapeHtml(label(meta["target"], meta["label"], True))
        link = f'<a class="wikilink" href="{escapeHtml(href(links, note, heading))}">{title}</a>'
        body = _body(env["load_note"], note, heading)
        # Its footnotes' ids are its own (fn1 of the note and of an embed were one id).
        env["embeds"] = env.get("embeds", 0) + 1
        inner = {"links": links.beside(note), "embedded": True, "docId": f"e{env['embeds']}"}
        shown = render_closed(md, body, inner)
        return f'<div class="embed">\n<p class="embed-title">{link}</p>\n{shown}'

    md.core.ruler.after("inline", "note_embeds", _mark_embeds)
    for kind in ("note_embed", "note_embed_close"):
        md.add_render_rule(kind, render)
