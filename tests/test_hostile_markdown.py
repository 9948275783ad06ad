"""Hostile notes near the size limit are chunked and shown in time proportional to their size.

- Thousands of Obsidian ``%%`` markers, on lines of their own or in one line: read in time.

- Unclosed ``<!--`` (on lines of their own or on one line): every character stays text. Finding
  each ``<!--``'s close by reading ahead made such a note take hours.
- Thousands of headings with the same text: each gets its own id. Trying every suffix from 1 for
  each repeat made the note view of such a note take hours.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from knowledge_assets.core.chunks.comments import CommentBlocks, strip_inline_comments
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("a <!-- x --> b", "a  b"),
        ("<!-- a --> `x` <!-- b -->", " `x` "),
        ("`<!-- x -->` b", "`<!-- x -->` b"),  # a code span is code
        ("``a`<!--x-->`` c<!--y-->", "``a`<!--x-->`` c"),  # closed by a run as long only
        ("` lone <!-- x --> b", "` lone  b"),  # a run no run closes is text
        ("a <!-- never closed", "a <!-- never closed"),
        ("a <!-- x --> b <!-- never closed", "a  b <!-- never closed"),
        ("<!---->", ""),
        ("<!-->x-->", ""),
        ("`a` <!-- `b` --> c `d`", "`a`  c `d`"),
    ],
)
def test_inline_comments_are_cut_and_code_spans_kept(line: str, kept: str) -> None:
    assert strip_inline_comments(line) == kept


@pytest.mark.parametrize(
    ("lines", "index", "length"),
    [
        (["<!-- a -->", "b"], 0, 1),
        (["<!--", "a", "-->", "b"], 0, 3),
        (["   <!--", "-->"], 0, 2),  # indented at most 3 spaces
        (["    <!--", "-->"], 0, None),  # 4 spaces: code, not a comment
        (["<!--", "a", "--> text"], 0, None),  # text after the close: ordinary lines
        (["<!--", "a"], 0, None),  # unclosed
        (["<!--", "<!--", "-->"], 1, 2),
        (["x", "<!-- a", "-->"], 0, None),
    ],
)
def test_comment_blocks(lines: list[str], index: int, length: int | None) -> None:
    assert CommentBlocks(lines).length(index) == length


def test_a_block_must_close_before_its_end_line() -> None:
    assert CommentBlocks(["<!--", "a", "-->"]).length(0, end=2) is None


_HOSTILE = """
import sys
from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links.resolve import NoteLinks
from knowledge_assets.core.chunks.chunking import chunk_document

body = sys.stdin.read()
chunks = chunk_document("hostile.md", {}, body)
kept = "".join(c.content for c in chunks)
html = render_note(body, NoteLinks("hostile.md", lambda: []))
print(kept.count("<!--"), html.count("&lt;!--"))
"""


@pytest.mark.parametrize("unit", ["<!--\n", "<!-- x\n", "<!--", "`<!--"])
def test_a_note_of_unclosed_comments_is_read_in_time_and_kept(unit: str) -> None:
    body = "# 見出し\n" + unit * (DEFAULT_MAX_BYTES // 4 // len(unit))  # a quarter of the limit
    done = subprocess.run(
        [sys.executable, "-c", _HOSTILE], input=body, capture_output=True, text=True,
        timeout=240,  # seconds; reading ahead from each <!-- took hours
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    in_chunks, in_page = map(int, done.stdout.split())
    openers = body.count("<!--")
    assert in_chunks == in_page == openers  # unclosed: every one of them stays text


@pytest.mark.parametrize("unit", ["%%\n", "%% x\n", "%%", "`%%"])
def test_a_note_of_obsidian_comment_markers_is_read_in_time(unit: str) -> None:
    body = "# 見出し\n" + unit * (DEFAULT_MAX_BYTES // 4 // len(unit))  # a quarter of the limit
    done = subprocess.run(
        [sys.executable, "-c", _HOSTILE], input=body, capture_output=True, text=True,
        timeout=240,  # seconds; minutes at most if any reader were quadratic
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


_HEADINGS = """
import re, sys
from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links.resolve import NoteLinks

html = render_note(sys.stdin.read(), NoteLinks("hostile.md", lambda: []))
ids = re.findall(r'<h[2-6] id="([^"]*)"', html)
print(len(ids), len(set(ids)))
"""


@pytest.mark.parametrize("unit", ["## 見出し\n", "# a\n", "a\n=\n\n"])
def test_a_note_of_repeated_headings_is_shown_in_time_with_distinct_ids(unit: str) -> None:
    count = 100_000  # within the size limit
    assert len((unit * count).encode()) <= DEFAULT_MAX_BYTES
    done = subprocess.run(
        [sys.executable, "-c", _HEADINGS], input=unit * count, capture_output=True, text=True,
        timeout=240,  # seconds; the repeats took hours
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(count), str(count)]


def test_a_long_run_of_spaces_under_a_commented_paragraph_is_read_in_time() -> None:
    """A paragraph with an unclosed comment looks ahead for a table: a row like ``|-`` followed
    by 32,000 spaces took 2.9 s to test, and a note of such rows minutes."""
    block = "a %% b\n|x|\n|-" + " " * 32_000 + "x\n\n"
    body = "# 見出し\n\n" + block * 60  # 1.9 MB, under the 2 MB limit
    done = subprocess.run(
        [sys.executable, "-c", _HOSTILE], input=body, capture_output=True, text=True,
        timeout=120,  # seconds; about two minutes before, well under a second now
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
