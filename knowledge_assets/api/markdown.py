"""A note's Markdown as HTML for the note view.

CommonMark with tables, task lists, strikethrough, footnotes and bare URLs (markdown-it-py and
its plugins), plus Obsidian wikilinks (``[[note]]``, ``[[note|label]]``, ``[[note#heading]]``,
``[[note#^block]]``), embeds (``![[note]]``, ``![[note#heading]]``: the note or section shown in
place), highlights (``==text==``), block ids (``^id``), callouts (``> [!tip]``, ``:::tip``) and
images (the vault's own, see :mod:`markdown_images`). Raw HTML renders through an allowlist and
never runs (:mod:`markdown_html`), and comments (HTML's and Obsidian's ``%%``) are left out; markdown-it refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` links
(except images). Links to notes lead to their note view (at the heading or block they name), or
show as a missing link when no current note has that name. Headings carry ids: ``h-`` and the
slug of their text; blocks with a ``^id``: ``b-`` and it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.anchors.index import slugify
from mdit_py_plugins.footnote import footnote_plugin

from knowledge_assets.api.attachments import attachment_url
from knowledge_assets.api.markdown_blocks import block_anchor, block_ids
from knowledge_assets.api.markdown_callouts import callouts
from knowledge_assets.api.markdown_comments import skip_comments
from knowledge_assets.api.markdown_embeds import Loader, embeds
from knowledge_assets.api.markdown_highlight import highlights
from knowledge_assets.api.markdown_html import raw_html, render_closed
from knowledge_assets.api.markdown_images import image_html, is_image, size
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks

__all__ = ["render_note"]

# In a table the label's bar is escaped: [[note\|label]].
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n|]+?)\\?(?:\|([^\[\]\n]*))?\]\]")
# A web, mail or other address; anything else is a path to another note.
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
# Japanese punctuation ends a bare URL: written right after one, with no space, it is prose.
_URL_END = re.compile(r"[、。，．「」『』（）【】〈〉《》！？：；　]")
# A size after an embedded image's bar (![[diagram.png|300]], |300x200) is no label.
_SIZE = re.compile(r"\d+(?:x\d+)?")
MISSING = "このノートはありません"
# Heading ids are prefixed: a heading named like one of the page's own elements ("similar",
# "home") or a script's global must not take its place.
HEADING_ID = "h-"


def heading_id(heading: str) -> str:
    """The id of a heading with this text, as a link's fragment names it (``#Café au lait`` or
    ``#café-au-lait``): the GitHub slug of the text (Japanese kept), prefixed; or the id of the
    block that ``#^id`` names."""
    return block_anchor(heading) or HEADING_ID + slugify(heading.strip())


def _wikilink(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(("[[", "![["), state.pos) or state.linkLevel > 0:
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"target": match[2], "label": match[3], "embed": bool(match[1])}
    state.pos = match.end()
    return True


def _label(target: str, label: str | None, embed: bool = False) -> str:
    """What a wikilink shows: its label, else the target with ``#`` as Obsidian shows it."""
    if label and label.strip() and not (embed and _SIZE.fullmatch(label.strip())):
        return label.strip()
    return " > ".join(part.strip() for part in target.split("#") if part.strip())


def _href(links: NoteLinks, note: LinkTarget, heading: str) -> str:
    """The address of ``note`` at ``heading`` (none: its top); a heading of the linking note
    itself is on the page already, unless the note is shown embedded in another's page."""
    if not heading.strip():
        return note.url
    fragment = "#" + quote(heading_id(heading), safe="")
    return fragment if links.is_here(note) and not links.embedded else note.url + fragment


def _note_anchor(href: str | None, inner: str) -> str:
    if href is None:
        return f'<span class="wikilink missing" title="{MISSING}">{inner}</span>'
    return f'<a class="wikilink" href="{escapeHtml(href)}">{inner}</a>'


def _render_wikilink(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    meta, links = tokens[idx].meta, env["links"]
    name, _, heading = meta["target"].partition("#")
    if meta.get("embed") and is_image(name):  # ![[diagram.png|300]]: the image
        width, height = size(meta["label"])
        alt = "" if width or not meta["label"] else meta["label"].strip()
        return image_html(links, name, alt, relative=False, width=width, height=height)
    note = links.resolve(name, relative=meta.get("relative", False))
    # [[note#A#B]] is heading B under A, as Obsidian writes a nested heading.
    href = _href(links, note, heading.rsplit("#", 1)[-1]) if note else None
    label = _label(meta["target"], meta["label"], meta.get("embed", False))
    return _note_anchor(href, escapeHtml(label))


def _note_target(href: str) -> tuple[str, str]:
    """The note path and the heading a relative link names, percent-decoded (``?…`` dropped)."""
    path, _, fragment = href.partition("#")
    return unquote(path.partition("?")[0]), unquote(fragment)


def _link(children: list[Token], i: int, links: NoteLinks) -> None:
    """Send a link to a note to its note view; one to a missing note becomes a missing link."""
    token = children[i]
    href = token.attrGet("href")
    if not isinstance(href, str):
        return
    if _EXTERNAL.match(href):
        token.attrSet("rel", "noopener noreferrer")
        return
    path, heading = _note_target(href)
    close = next((t for t in children[i:] if t.type == "link_close"), None)
    if close is None:  # no link_close: a link markdown-it did not finish is left as it is
        return
    if is_image(path):  # a link to an image (a picture that opens large): the image itself
        found = links.image(path, relative=True)
        if found is not None:
            token.attrSet("href", attachment_url(found))
        else:  # no such file here: what the link holds, not a missing note
            for t in (token, close):
                t.type, t.tag, t.content, t.nesting = "text", "", "", 0
        return
    # A Markdown link's path is relative to the note, as on GitHub and documentation sites.
    note = links.resolve(path, relative=True)
    if note is not None:
        token.attrSet("href", _href(links, note, heading))
        return
    token.tag = close.tag = "span"
    token.attrs = {"class": "wikilink missing", "title": MISSING}


def _image(token: Token) -> None:
    """Web images load lazily; an image file shows from the vault (or says it is not there);
    anything else it names shows as a missing embed with its description."""
    src = token.attrGet("src")
    if isinstance(src, str) and _EXTERNAL.match(src):
        token.attrSet("loading", "lazy")
        return
    target = _note_target(str(src or ""))[0]
    alt = "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))
    token.children = None
    if is_image(target):
        token.type, token.meta = "vault_image", {"target": target, "alt": alt}
        return
    token.type = "wikilink"
    token.meta = {"target": target, "label": token.content or None, "relative": True}


def _render_image(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    meta = tokens[idx].meta
    return image_html(env["links"], meta["target"], meta["alt"], relative=True)


def _raw_link(md: MarkdownIt, links: NoteLinks, href: str) -> str | None:
    """The address a raw HTML link or image leads to: a web address markdown-it accepts, or
    the note or vault image it names; None for anything else."""
    href = href.strip()
    url = md.normalizeLink(href)
    if not href or not md.validateLink(url):
        return None
    if _EXTERNAL.match(href):
        return url
    path, heading = _note_target(href)
    if is_image(path):
        found = links.image(path, relative=True)
        return attachment_url(found) if found else None
    note = links.resolve(path, relative=True)
    return _href(links, note, heading) if note else None


def _trim_bare_url(state: StateCore, children: list[Token], i: int) -> None:
    """End the bare URL whose link opens at ``i`` before any Japanese punctuation in it."""
    text = children[i + 1]
    end = _URL_END.search(text.content)
    if text.type != "text" or end is None:
        return
    rest = Token("text", "", 0, content=text.content[end.start() :])
    text.content = text.content[: end.start()]
    children[i].attrSet("href", state.md.normalizeLink(text.content))
    children.insert(i + 3, rest)


def _note_links(state: StateCore) -> None:
    for block in state.tokens:
        children = block.children or []
        for i, token in enumerate(children):
            if token.type == "link_open" and token.markup == "linkify":
                _trim_bare_url(state, children, i)
            if token.type == "link_open":
                _link(children, i, state.env["links"])
            elif token.type == "image":
                _image(token)


def _heading_ids(state: StateCore) -> None:
    """Each heading's id, as mdit-py-plugins' anchors plugin gives it (the slug of its text; a
    repeated one takes the first free ``-1``, ``-2``…). Not the plugin itself: it tries every
    suffix from 1 for each repeat, so a note of thousands of like headings took minutes."""
    if state.env.get("embedded"):  # an embedded note's ids would repeat the page's own
        return
    headings = [(i, t) for i, t in enumerate(state.tokens) if t.type == "heading_open"]
    taken = {str(t.attrGet("id")) for _, t in headings if t.attrGet("id")}
    next_suffix: dict[str, int] = {}  # below it, every suffix of the slug is taken
    for i, token in headings:
        if token.attrGet("id"):
            continue
        slug = heading_id(_heading_text(state.tokens[i + 1].children or []))
        unique, suffix = slug, next_suffix.get(slug, 1)
        while unique in taken:
            unique, suffix = f"{slug}-{suffix}", suffix + 1
        next_suffix[slug] = suffix
        taken.add(unique)
        token.attrSet("id", unique)


def _heading_text(children: Sequence[Token]) -> str:
    """A heading's text as a link to it names it: a wikilink in it by what it shows
    (``## [[README]] について`` is "README について"; it was "について")."""
    shown = {"text", "code_inline"}
    return "".join(
        _label(c.meta["target"], c.meta["label"]) if c.type == "wikilink" else c.content
        for c in children
        if c.type in shown or (c.type == "wikilink" and not c.meta.get("embed"))
    )


def _shift_headings(state: StateCore) -> None:
    # The note's title is the page's <h1>: the note's own headings go one level down.
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"


def _table_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    # The wrapper scrolls sideways when the table is wider than the page (a phone).
    return '<div class="table-wrap">' + renderer.renderToken(tokens, idx, options, env)


def _table_close(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    return renderer.renderToken(tokens, idx, options, env) + "</div>\n"


def _markdown() -> MarkdownIt:
    # Obsidian shows a single line break as a break (its default, "strict line breaks" off).
    # Raw HTML is parsed, and rendered through the allowlist of markdown_html.
    md = MarkdownIt("commonmark", {"html": True, "breaks": True, "linkify": True, "tasklists": True})  # fmt: skip
    md.enable(["table", "strikethrough", "linkify"])
    if md.linkify is None:
        raise ModuleNotFoundError("linkify-it-py is missing: reinstall knowledge-assets")
    md.linkify.set({"fuzzy_link": False})  # "README.md" is a file name, not a site in Moldova
    # [^1] is a footnote, never a link: without the plugin, "[^1]: note" defined a link to "note".
    md.use(footnote_plugin)
    md.core.ruler.push("heading_ids", _heading_ids)
    skip_comments(md)
    callouts(md)
    highlights(md)
    block_ids(md)
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.core.ruler.push("note_links", _note_links)
    md.core.ruler.push("shift_headings", _shift_headings)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("vault_image", _render_image)
    raw_html(md, _raw_link)
    embeds(md, _href, _label)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    return md


_MARKDOWN = _markdown()


def render_note(text: str, links: NoteLinks, load_note: Loader | None = None) -> str:
    """The HTML of a note's body (its Markdown without the frontmatter); with ``load_note``
    (a current note's body), the notes it embeds are shown in it."""
    return render_closed(_MARKDOWN, text, {"links": links, "load_note": load_note})
