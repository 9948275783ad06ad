"""Hostile notes near the size limit are chunked and shown in time proportional to their size.

- Thousands of Obsidian ``%%`` markers, on lines of their own or in one line: read in time.

- Unclosed ``<!--`` (on lines of their own or on one line): every character stays text. Finding
  each ``<!--``'s close by reading ahead made such a note take hours.
- Thousands of headings with the same text: each gets its own id. Trying every suffix from 1 for
  each repeat made the note view of such a note take hours.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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


# One process reads every hostile note of a test module: each note is still read in a process
# of its own that is killed when it overruns its bound, without paying the imports (seconds on
# a busy machine) once per note.
_READER = """
import json, re, sys, traceback
from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.links.resolve import NoteLinks

def chunked_and_shown(body):
    chunks = chunk_document("hostile.md", {}, body)
    kept = "".join(c.content for c in chunks)
    html = render_note(body, NoteLinks("hostile.md", lambda: []))
    return [kept.count("<!--"), html.count("&lt;!--")]

def heading_ids(body):
    html = render_note(body, NoteLinks("hostile.md", lambda: []))
    ids = re.findall(r'<h[2-6] id="([^"]*)"', html)
    return [len(ids), len(set(ids))]

for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = {"result": globals()[request["task"]](request["body"])}
    except Exception:
        answer = {"error": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


class Reader:
    """The reading process: started on the first note, killed (and started again for the next
    note) when a note overruns its bound."""

    def __init__(self, errors: Path) -> None:
        self.errors = errors
        self.process: subprocess.Popen[bytes] | None = None

    def read(self, task: str, body: str, timeout: float) -> list[int]:
        """What ``task`` (``chunked_and_shown`` or ``heading_ids``) gives for ``body``; fails
        when it takes more than ``timeout`` seconds or raises."""
        if self.process is None:
            with self.errors.open("ab") as errors:
                self.process = subprocess.Popen(
                    [sys.executable, "-c", _READER],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                )  # fmt: skip
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"task": task, "body": body}).encode() + b"\n")
        process.stdin.flush()
        deadline = time.monotonic() + timeout
        answer = b""
        while not answer.endswith(b"\n"):
            left = max(deadline - time.monotonic(), 0)
            ready, _, _ = select.select([process.stdout], [], [], left)
            chunk = os.read(process.stdout.fileno(), 1 << 16) if ready else b""
            if not chunk:
                self.close()
                said = self.errors.read_text(errors="replace")[-2000:]
                raise AssertionError(f"not read within {timeout:.0f} s: {said}")
            answer += chunk
        reply = json.loads(answer)
        assert "error" not in reply, reply["error"][-2000:]
        result: list[int] = reply["result"]
        return result

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.communicate(timeout=30)
            self.process = None


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    started = Reader(tmp_path_factory.mktemp("reader") / "stderr")
    try:
        yield started
    finally:
        started.close()


@pytest.mark.parametrize("unit", ["<!--\n", "<!-- x\n", "<!--", "`<!--"])
def test_a_note_of_unclosed_comments_is_read_in_time_and_kept(unit: str, reader: Reader) -> None:
    body = "# 見出し\n" + unit * (DEFAULT_MAX_BYTES // 4 // len(unit))  # a quarter of the limit
    # seconds; reading ahead from each <!-- took hours
    in_chunks, in_page = reader.read("chunked_and_shown", body, timeout=240)
    openers = body.count("<!--")
    assert in_chunks == in_page == openers  # unclosed: every one of them stays text


@pytest.mark.parametrize("unit", ["%%\n", "%% x\n", "%%", "`%%"])
def test_a_note_of_obsidian_comment_markers_is_read_in_time(unit: str, reader: Reader) -> None:
    body = "# 見出し\n" + unit * (DEFAULT_MAX_BYTES // 4 // len(unit))  # a quarter of the limit
    # seconds; minutes at most if any reader were quadratic
    reader.read("chunked_and_shown", body, timeout=240)


@pytest.mark.parametrize("unit", ["## 見出し\n", "# a\n", "a\n=\n\n"])
def test_a_note_of_repeated_headings_is_shown_in_time_with_distinct_ids(
    unit: str, reader: Reader
) -> None:
    count = 100_000  # within the size limit
    assert len((unit * count).encode()) <= DEFAULT_MAX_BYTES
    # seconds; the repeats took hours
    assert reader.read("heading_ids", unit * count, timeout=240) == [count, count]


def test_a_long_run_of_spaces_under_a_commented_paragraph_is_read_in_time(reader: Reader) -> None:
    """A paragraph with an unclosed comment looks ahead for a table: a row like ``|-`` followed
    by 32,000 spaces took 2.9 s to test, and a note of such rows minutes."""
    block = "a %% b\n|x|\n|-" + " " * 32_000 + "x\n\n"
    body = "# 見出し\n\n" + block * 60  # 1.9 MB, under the 2 MB limit
    # seconds; about two minutes before, well under a second now
    reader.read("chunked_and_shown", body, timeout=120)
