"""Obsidian's block ids in the note view: a paragraph or list item ending in `` ^id`` (or a line
``^id`` of its own, after a table or a quote) is the target of links to ``note#^id``. The id is
not shown, as in Obsidian's reading view; the block carries it as its element id, so such a link
lands on the block."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

__all__ = ["BLOCK_ID", "block_anchor", "block_ids"]

BLOCK_ID = "b-"  # element ids of blocks; headings' take "h-"
_REF = re.compile(r"\^([A-Za-z0-9-]+)")  # what follows '#' in a link to a block
_TRAILING = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")


def block_anchor(fragment: str) -> str | None:
    """The element id a link's ``#^id`` fragment names, or None for a heading's fragment."""
    match = _REF.fullmatch(fragment.strip())
    return BLOCK_ID + match[1] if match else None


def _holder(tokens: list[Token], inline: int) -> Token | None:
    """The element that shows the block whose text is ``tokens[inline]``: its paragraph, or the
    list item of a tight list (whose paragraphs render no tag)."""
    before = tokens[inline - 1] if inline > 0 else None
    if before is None or before.type != "paragraph_open":  # a heading is linked by its text
        return None
    if not before.hidden:
        return before
    item = tokens[inline - 2] if inline > 1 else None
    return item if item is not None and item.type == "list_item_open" else None


def _block_ids(state: StateCore) -> None:
    for i, token in enumerate(state.tokens):
        last = token.children[-1] if token.type == "inline" and token.children else None
        # The regex only where a "^" is: searching every text of a long note for its end costs
        # a scan each.
        text = last.content if last is not None and last.type == "text" else ""
        match = _TRAILING.search(text) if "^" in text else None
        holder = _holder(state.tokens, i) if match else None
        if match is None or holder is None or holder.attrGet("id"):
            continue
        last.content = last.content[: match.start()]  # type: ignore[union-attr]
        if state.env.get("embedded"):  # shown in another note: its ids are that note's
            continue
        holder.attrSet("id", BLOCK_ID + match[1])
        if not "".join(c.content for c in token.children or []).strip():
            holder.attrJoin("class", "block-id")  # "^id" alone on its line: an anchor only


def block_ids(md: MarkdownIt) -> None:
    """Give blocks their ``^id`` as element id, without showing it, in what ``md`` renders."""
    md.core.ruler.after("inline", "block_ids", _block_ids)
