"""Hostile Markdown: does reading a note grow with its size, or faster?

    python bench/hostile_markdown.py [--units 10000] [--out FILE]

For each of 58 constructs (headings, comment openers (HTML's and Obsidian's), callouts, ``==``,
hash tags, wikilinks, footnotes, fences, tables, lists, quotes, raw HTML, images, zero-width
characters, CR, …) a note of ``n`` and of ``4 n`` repeats of it is chunked (``chunk_document``,
the default strategy), read for its inline tags (``inline_tags``), rendered for the note view
(``render_note``), served by the MCP server's ``get_doc`` (``document_part``: its pages and
section listing), reduced to its keyword text (``without_link_targets``), cut to a search
hit's snippet (``plain_snippet``) and read for the sentences an offline answer quotes
(``section_sentences``). Time that grows by much more than 4× for 4× the input is quadratic or worse:
a note of up to the 2 MB size limit would then take minutes to hours. Pure Python, no database;
each figure is one run, in this process.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from knowledge_assets.answer.sentences import section_sentences  # noqa: E402
from knowledge_assets.api.markdown import render_note  # noqa: E402
from knowledge_assets.core.chunks.chunk_text import without_link_targets  # noqa: E402
from knowledge_assets.core.chunks.chunking import chunk_document  # noqa: E402
from knowledge_assets.core.chunks.inline_tags import inline_tags  # noqa: E402
from knowledge_assets.core.links.resolve import NoteLinks  # noqa: E402
from knowledge_assets.core.plain_text import plain_snippet  # noqa: E402
from knowledge_assets.mcp.format import document_part  # noqa: E402

UNITS = {
    "wikilink openers": "[[", "wikilink unclosed lines": "[[a\n", "wikilinks": "[[a]]",
    "embeds": "![[a]]", "brackets": "[", "link openers": "[a](", "footnote refs": "[^a]",
    "footnote defs": "[^a]: x\n", "emphasis": "*a", "underscores": "_a", "backticks": "`",
    "html lt": "<a ", "autolink": "<http://a", "urls": "http://a.b/ ", "hash tags": "#a ",
    "headings": "## a\n", "h1": "# a\n", "setext": "a\n=\n", "fence openers": "```\n",
    "fence tilde": "~~~a\n", "list nest": "- ", "quote nest": "> ", "table rows": "|a|b|\n",
    "table delim": "|-|\n", "comment lines": "<!--\n", "comment openers": "<!--",
    "obsidian comment lines": "%%\n", "obsidian comments": "%% a\n", "obsidian openers": "%%",
    "comments across lines": "a <!-- b\n", "obsidian across lines": "a %% b\n",
    "quoted across lines": "> a %% b\n",
    "callouts": "> [!tip]\n\n", "site callouts": ":::tip\n", "site closes": ":::\n",
    "highlights": "==a== ", "highlight marks": "==", "block ids": "a ^b1\n\n",
    "sentences no break": "あ", "dots": ".", "newlines": "\n", "spaces": " ",
    "zero width": "\u200b", "crlf": "\r\n", "cr": "\r", "entities": "&amp;", "bad entity": "&#",
    "html tags": "<b>x</b>", "html opens": "<div>", "html quotes": '<a href="', "ruby": "<ruby>a<rt>b</rt></ruby>",
    "html images": '<img src="a.png">', "images": "![a](b.png) ", "scripts": "<script>",
    "link then spaces": "[a](" + " " * 50, "heading then spaces": "### a" + " " * 50 + "b\n",
    "shortcut opens": "[あ", "import lines": "import  a ",
}  # fmt: skip
# Growth over this for 4x the input is flagged (linear work with allocation noise stays under).
FLAG = 8.0


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _readers(body: str) -> dict[str, Callable[[], object]]:
    return {
        "chunker": lambda: chunk_document("hostile.md", {}, body),
        "tags": lambda: inline_tags(body),
        "note view": lambda: render_note(body, NoteLinks("hostile.md", lambda: [])),
        "get_doc": lambda: document_part({"file_path": "hostile.md", "content": body}, None, 1),
        "keywords": lambda: without_link_targets(body),
        "snippet": lambda: plain_snippet(body, 160),
        "answer": lambda: section_sentences(body),
    }


def sweep(units: int) -> list[str]:
    """One line per construct and reader: seconds at ``units`` and ``4 units`` repeats."""
    lines = []
    for name, unit in UNITS.items():
        small, large = ("# t\n" + unit * n for n in (units, 4 * units))
        for reader, work in _readers(small).items():
            before, after = work, _readers(large)[reader]
            t1, t4 = _seconds(before), _seconds(after)
            growth = t4 / max(t1, 1e-4)
            flag = "  <-- faster than linear" if growth > FLAG and t4 > 0.2 else ""
            lines.append(f"{name:24} {reader:9} {t1:7.3f} s -> {t4:7.3f} s  x{growth:5.1f}{flag}")
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000, help="repeats of each construct")
    parser.add_argument("--out", type=Path, help="also write the figures here")
    args = parser.parse_args()
    head = [
        f"command: python bench/hostile_markdown.py --units {args.units}",
        f"data: each construct repeated {args.units:,} and {4 * args.units:,} times after '# t'",
        f"machine: {platform.machine()}, Python {platform.python_version()}",
    ]
    print("\n".join(head), flush=True)
    lines = sweep(args.units)
    flagged = sum("faster than linear" in line for line in lines)
    tail = f"{flagged} of {len(lines)} readings grew faster than linear (over x{FLAG:g} for x4)"
    print(tail)
    if args.out:
        args.out.write_text("\n".join([*head, *lines, tail]) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
