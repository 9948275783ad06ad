"""Callouts in the note view: Obsidian's ``> [!tip] Title`` and documentation sites' ``:::tip
Title`` … ``:::`` (Docusaurus, VitePress) are shown as a titled box of their kind, not as a
quote starting with ``[!tip]`` or as lines of colons.

- Obsidian: a quote whose first line is ``[!type]``, with an optional fold mark and title. Any
  type is a callout, as in Obsidian. A fold mark makes the box one a reader opens and closes
  (``<details>``): ``-`` starts it closed, ``+`` open.
- Documentation sites: ``:::type``, ``:::type Title`` or ``:::type[Title]`` up to a line of
  ``:::`` (mdit-py-plugins' container plugin), for the types those sites know; another word
  after ``:::`` stays text. ``:::details`` folds, closed, as those sites show it.

Without a title the box is titled by its kind, in Japanese for the usual kinds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

__all__ = ["callouts"]

# Each kind's label and colour family (one style per family).
_KINDS = {
    "note": ("メモ", "note"), "info": ("情報", "note"), "todo": ("TODO", "note"),
    "abstract": ("概要", "quote"), "summary": ("概要", "quote"), "tldr": ("要約", "quote"),
    "tip": ("ヒント", "tip"), "hint": ("ヒント", "tip"), "important": ("重要", "tip"),
    "success": ("成功", "tip"), "check": ("確認", "tip"), "done": ("完了", "tip"),
    "question": ("質問", "warning"), "help": ("ヘルプ", "warning"), "faq": ("FAQ", "warning"),
    "warning": ("警告", "warning"), "caution": ("注意", "warning"),
    "attention": ("注意", "warning"), "failure": ("失敗", "danger"), "fail": ("失敗", "danger"),
    "missing": ("不足", "danger"), "danger": ("危険", "danger"), "error": ("エラー", "danger"),
    "bug": ("バグ", "danger"), "example": ("例", "quote"), "quote": ("引用", "quote"),
    "cite": ("引用", "quote"), "secondary": ("メモ", "quote"), "details": ("詳細", "quote"),
}  # fmt: skip
# The kinds documentation sites give ":::" (Docusaurus, VitePress, Starlight).
_SITE_KINDS = frozenset(
    "note tip info important success secondary caution warning danger details".split()
)
_OBSIDIAN = re.compile(r"\[!([^\]\s]+)\]([+-]?)[ \t]*(.*)")
_SITE = re.compile(r"([A-Za-z]+)(?:\[(.*)\])?[ \t]*(.*)")


def _box(kind: str, title: str, fold: str = "", *, html: str | None = None) -> str:
    """The opening of a callout box of ``kind`` (as written) with ``title`` or its label
    (``html``: the title already rendered, for Obsidian's, whose titles are Markdown).

    ``fold`` is Obsidian's mark: ``-`` a folded box, ``+`` a foldable one shown open.
    """
    label, family = _KINDS.get(kind.lower(), (kind, "note"))
    attrs = f'class="callout callout-{family}" data-callout="{escapeHtml(kind.lower())}"'
    title = html or escapeHtml(title.strip() or label)
    if fold:
        opened = " open" if fold == "+" else ""
        return f'<details {attrs}{opened}>\n<summary class="callout-title">{title}</summary>\n'
    return f'<div {attrs}>\n<p class="callout-title">{title}</p>\n'


def _end(fold: str) -> str:
    return "</details>\n" if fold else "</div>\n"


def _site_kind(params: str) -> re.Match[str] | None:
    match = _SITE.fullmatch(params.strip())
    return match if match and match[1].lower() in _SITE_KINDS else None


def _render_site(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    token = tokens[idx]
    if token.nesting == 1:
        match = _site_kind(token.info)  # the container opened only for a known kind
        kind, title = (match[1], match[2] or match[3]) if match else ("note", "")
        fold = "-" if kind.lower() == "details" else ""
        tokens[_closing(tokens, idx, "container_callout_close")].meta["fold"] = fold
        return _box(kind, title, fold)
    return _end(token.meta.get("fold", ""))


def _closing(tokens: Sequence[Token], start: int, kind: str = "blockquote_close") -> int:
    """The index of the ``kind`` token closing the opening at ``start``."""
    level = tokens[start].level
    return next(
        i for i in range(start + 1, len(tokens))
        if tokens[i].type == kind and tokens[i].level == level
    )  # fmt: skip


def _obsidian_callouts(state: StateCore) -> None:
    """Turn each quote opened by ``[!type]`` into a callout box (before inline parsing)."""
    tokens = state.tokens
    i = 0
    while i < len(tokens) - 2:
        opening, inline = tokens[i], tokens[i + 2]
        if opening.type != "blockquote_open":  # the rest only for a quote: a huge note is
            i += 1  # mostly other tokens, and splitting each one's text cost a pass of copies
            continue
        first, _, rest = inline.content.partition("\n")
        match = _OBSIDIAN.fullmatch(first.strip())
        if match is None or tokens[i + 1].type != "paragraph_open" or inline.type != "inline":
            i += 1
            continue
        close = tokens[_closing(tokens, i)]
        opening.tag = close.tag = "div"
        close.meta["fold"] = match[2]
        title = Token("callout_title", "", 0, content=match[3])
        title.meta = {"kind": match[1], "fold": match[2]}
        if rest.strip():
            inline.content = rest
            tokens.insert(i + 1, title)
        else:  # a callout of a title alone
            tokens[i + 1 : i + 4] = [title]
        opening.type, close.type = "callout_open", "callout_close"
        i += 2


def _obsidian_renderer(md: MarkdownIt) -> Any:
    """The render rule of Obsidian's callouts: a title is Markdown (``**重要** な [[README]]``),
    rendered as a line of the note is."""

    def render(
        renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
    ) -> str:
        token = tokens[idx]
        if token.type == "callout_title":
            html = md.renderInline(token.content.strip(), env) if token.content.strip() else None
            return _box(token.meta["kind"], token.content, token.meta["fold"], html=html)
        return _end(token.meta.get("fold", "")) if token.type == "callout_close" else ""

    return render


def callouts(md: MarkdownIt) -> None:
    """Show callouts of both kinds as titled boxes in what ``md`` renders."""
    container_plugin(
        md, "callout", validate=lambda params, *_: _site_kind(params) is not None,
        render=_render_site,
    )  # fmt: skip
    md.core.ruler.before("inline", "obsidian_callouts", _obsidian_callouts)
    render = _obsidian_renderer(md)
    for kind in ("callout_open", "callout_title", "callout_close"):
        md.add_render_rule(kind, render)
