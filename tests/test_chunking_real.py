"""The chunker on real corpora, files read and parsed exactly as the ingest reads them.

"Without losing text" means, for every note: take its body as ``parse_document`` returns it,
drop blank lines, HTML comments and the H1/``##`` heading lines that lie outside fenced code (the
chunker moves headings into ``parent_heading`` / ``heading`` and leaves comments out, as the note
page does), and strip each remaining line. When no chunk was
cut at sentence ends, that sequence of lines equals, in order and line for line, the non-blank
stripped lines of the chunks' contents concatenated. When the sentence fallback cut a long line,
the two texts are equal once all whitespace is removed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

import psycopg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.chunking import Chunk, chunk_document
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders.usem3 import MAX_TOKENS as USEM3_MAX_TOKENS
from knowledge_assets.core.index.index_build import model_index_name
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

from .conftest import JSQUAD, SURVIVAL

needs_survival = pytest.mark.skipif(not SURVIVAL.is_dir(), reason="survival-ts docs are missing")
needs_jsquad = pytest.mark.skipif(not JSQUAD.is_dir(), reason="jsquad is missing")

# Written independently of core.markdown: an ATX H1/H2, and a fence opener/closer.
_H1_H2 = re.compile(r"^ {0,3}(#{1,2})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_MDX = re.compile(r"^\s*(?:import\s|export\s|</?[A-Z][\w.]*)")
_CUT_AT_SENTENCES = ("split on sentences", "single sentence")
_SPAN_OR_COMMENT = re.compile(r"(`+).+?\1|<!--.*?-->")  # code spans kept, comments dropped


def _classify(body: str) -> list[tuple[str, bool, int]]:
    """``(line, fenced, heading level 1/2 or 0)`` for each line of ``body``."""
    out: list[tuple[str, bool, int]] = []
    fence: str | None = None
    for line in body.split("\n"):
        if fence is not None:
            out.append((line, True, 0))
            stripped = line.strip()
            run = re.match(r"^(`+|~+)$", stripped)
            if run and run[1][0] == fence[0] and len(run[1]) >= len(fence):
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened and not (opened[1][0] == "`" and "`" in opened[2]):
            fence = opened[1]
            out.append((line, True, 0))
            continue
        heading = _H1_H2.match(line)
        out.append((line, False, len(heading[1]) if heading else 0))
    return out


def _uncommented(lines: list[tuple[str, bool, int]]) -> list[tuple[str, bool, int]]:
    """``lines`` without HTML comments outside code: a block from a line opening ``<!--`` to the
    line closing it (when nothing follows its ``-->``), and a comment within a line but not within
    a code span."""
    out: list[tuple[str, bool, int]] = []
    in_block = False
    for line, fenced, level in lines:
        if fenced:
            out.append((line, fenced, level))
        elif in_block:
            in_block = "-->" not in line
        elif line.lstrip().startswith("<!--") and "-->" not in line[line.find("<!--") + 4 :]:
            in_block = True
        else:
            kept = _SPAN_OR_COMMENT.sub(lambda m: m[0] if m[1] else "", line)
            out.append((kept, fenced, level))
    return out


def _kept_lines(body: str) -> list[str]:
    lines = _uncommented(_classify(body))
    return [line.strip() for line, _, level in lines if line.strip() and not level]


def _content_lines(chunks: list[Chunk]) -> list[str]:
    text = "\n".join(c.content for c in chunks)
    return [line.strip() for line in text.split("\n") if line.strip()]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@cache
def _survival_docs() -> tuple[ParsedDoc, ...]:
    docs = []
    for path in sorted(SURVIVAL.rglob("*.md*")):
        parsed = parse_document(str(path.relative_to(SURVIVAL)), path.read_bytes())
        assert isinstance(parsed, ParsedDoc), f"{path.name} rejected: {parsed.reason}"
        docs.append(parsed)
    return tuple(docs)


def _chunks(doc: ParsedDoc, max_tokens: int) -> list[Chunk]:
    return chunk_document(doc.path, doc.frontmatter, doc.body, max_tokens=max_tokens)


@needs_survival
def test_every_survival_file_parses_as_a_note() -> None:
    docs = _survival_docs()
    assert len(docs) == 264
    with_frontmatter = sum(1 for d in docs if d.frontmatter)
    assert 0.5 < with_frontmatter / len(docs) < 0.8  # the README's 63%
    assert all(d.body.strip() for d in docs)


@needs_survival
@pytest.mark.parametrize("max_tokens", [USEM3_MAX_TOKENS, 512, 200])
def test_survival_chunks_lose_no_line_and_respect_the_limit(max_tokens: int) -> None:
    cut_docs = warned = 0
    for doc in _survival_docs():
        chunks = _chunks(doc, max_tokens)
        assert chunks, doc.path
        assert [c.index for c in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            # an empty ## section is still a chunk (its heading is findable); an intro never is
            assert chunk.content.strip() or chunk.heading != chunk.parent_heading, doc.path
            assert chunk.embedding_text.endswith(chunk.content), doc.path
            if chunk.token_estimate > max_tokens:
                assert chunk.warning and "single sentence" in chunk.warning, (doc.path, chunk)
        warned += sum(1 for c in chunks if c.warning)
        if any(c.warning and c.warning.endswith(_CUT_AT_SENTENCES) for c in chunks) or any(
            c.warning and "single sentence" in c.warning for c in chunks
        ):
            cut_docs += 1
            joined = "".join(c.content for c in chunks)
            assert _squash(joined) == _squash("".join(_kept_lines(doc.body))), doc.path
        else:
            assert _content_lines(chunks) == _kept_lines(doc.body), doc.path
    if max_tokens == 200:
        assert warned and cut_docs  # the fallbacks really ran on this corpus


def _sections(chunks: list[Chunk]) -> list[str]:
    """The ``##`` titles the chunks came from: ``### `` parts and ``(i/n)`` parts folded back."""
    out: list[str] = []
    for chunk in chunks:
        if chunk.heading == chunk.parent_heading:
            continue  # intro chunk
        base = re.sub(r" \(\d+/\d+\)$", "", chunk.heading_path).split(" > ")[1]
        if chunk.heading == base or not out or out[-1] != base:
            out.append(base)
    return out


@needs_survival
def test_survival_headings_in_fenced_code_are_not_split_points() -> None:
    fenced_headings = 0
    for doc in _survival_docs():
        lines = _classify(doc.body)
        expected = [
            (_H1_H2.match(line)[2] or "").strip()  # type: ignore[index]
            for line, _, level in lines
            if level == 2
        ]
        chunks = _chunks(doc, USEM3_MAX_TOKENS)
        assert _sections(chunks) == expected, doc.path
        content = "\n".join(c.content for c in chunks)
        for line, fenced, _ in lines:
            if fenced and _H1_H2.match(line):
                fenced_headings += 1
                assert line.strip() in content, (doc.path, line)
    assert fenced_headings >= 10  # shell comments and Markdown samples inside code blocks


@needs_survival
def test_survival_mdx_lines_survive_verbatim() -> None:
    files_with_mdx = 0
    for doc in _survival_docs():
        mdx = [line for line, fenced, _ in _classify(doc.body) if not fenced and _MDX.match(line)]
        if not mdx:
            continue
        files_with_mdx += 1
        contents = [c.content for c in _chunks(doc, USEM3_MAX_TOKENS)]
        for line in mdx:
            assert any(line.strip() in content for content in contents), (doc.path, line)
    assert files_with_mdx >= 40  # about 19% of 264


@needs_survival
def test_survival_oversized_sections_are_resplit_not_truncated() -> None:
    # Long reference pages go over a 2,000-token limit: they must come back as several chunks
    # whose contents add up to the whole section.
    resplit = 0
    for doc in _survival_docs():
        chunks = _chunks(doc, 2000)
        parts = [c for c in chunks if " > " in c.heading or re.search(r" \(\d+/\d+\)$", c.heading)]
        resplit += bool(parts)
    assert resplit >= 5


def _queries() -> list[dict[str, str]]:
    with (JSQUAD / "queries.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@needs_jsquad
def test_jsquad_one_chunk_per_paragraph_section_matching_the_judgements() -> None:
    vault = JSQUAD / "vault"
    keys: list[tuple[str, str]] = []
    intros = 0
    for path in sorted(vault.glob("*.md")):
        doc = parse_document(path.name, path.read_bytes())
        assert isinstance(doc, ParsedDoc)
        sections = re.findall(r"^## (第\d+段落)$", doc.body, flags=re.MULTILINE)
        chunks = _chunks(doc, USEM3_MAX_TOKENS)
        body_chunks = [c for c in chunks if c.heading != c.parent_heading]
        intros += len(chunks) - len(body_chunks)
        assert [c.heading for c in body_chunks] == sections, path.name
        assert all(c.warning is None for c in chunks)
        assert all(c.parent_heading == doc.frontmatter["title"] for c in chunks)
        keys += [(doc.path, c.heading) for c in body_chunks]
    assert len(keys) == 1145 and len(set(keys)) == 1145
    assert intros == 0  # each note goes straight from its H1 to 第1段落
    judged = Counter((q["file_path"], q["heading"]) for q in _queries())
    assert sum(judged.values()) == 4442
    assert set(judged) <= set(keys)


@needs_jsquad
def test_jsquad_through_the_pipeline_stores_the_judged_chunks(db_url: str) -> None:
    source = LocalSource(JSQUAD / "vault")
    with db.connect(db_url) as conn:
        sync = sync_source(conn, source)
        refresh_latest(conn, source.table)
        report = refresh_chunks(conn, max_tokens=USEM3_MAX_TOKENS)
        rows = conn.execute(
            "SELECT d.file_path, c.heading, c.embedding_text FROM rag.chunks c"
            " JOIN rag.latest_docs d ON d.id = c.document_id"
        ).fetchall()
    assert len(sync.new) == 59 and not sync.rejected
    assert report.chunks_written == len(rows) == 1145 and not report.warnings
    stored = {(path, heading) for path, heading, _ in rows}
    assert {(q["file_path"], q["heading"]) for q in _queries()} <= stored
    texts = {(path, heading): text for path, heading, text in rows}
    first = texts[("a10336_梅雨.md", "第1段落")]
    assert first.startswith(
        "title:梅雨|tags:jsquad,wikipedia\n\n# 梅雨\n\n## 第1段落\n\n梅雨（つゆ"
    )
    second = texts[("a10336_梅雨.md", "第2段落")]
    assert second.startswith("title:梅雨|tags:jsquad,wikipedia\n\n[prev] ")
    assert "\n\n# 梅雨\n\n## 第2段落\n\n梅雨の時期が始まる" in second


class _HashEmbedder:
    """A fast deterministic stand-in with the Embedder shape (vectors from text hashes)."""

    provider = "usem3"
    model = "fake-bulk"
    dims = 16
    max_tokens = USEM3_MAX_TOKENS
    batch_size = 128

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self.fail_after = fail_after

    def embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("model crashed")
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()[: self.dims]
            vec = [b - 127.5 for b in digest]
            norm = math.sqrt(sum(v * v for v in vec))
            out.append([v / norm for v in vec])
        return out


def _has_index(conn: psycopg.Connection, model: str) -> bool:
    name = model_index_name(model)
    row = conn.execute("SELECT to_regclass(%s)", (f"rag.{name}",)).fetchone()
    return row is not None and row[0] is not None


@needs_jsquad
def test_bulk_embedding_of_the_jsquad_chunks_leaves_the_model_index_in_place(db_url: str) -> None:
    # 1,145 texts is a bulk load: the index is built once at the end, also after a failure.
    source = LocalSource(JSQUAD / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=USEM3_MAX_TOKENS)
        with pytest.raises(RuntimeError, match="model crashed"):
            embed_missing(conn, _HashEmbedder(fail_after=3))
        assert _has_index(conn, "fake-bulk")
        partial = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
        assert partial == (3 * 128,)  # every finished batch was kept
        report = embed_missing(conn, _HashEmbedder())
        assert (report.embedded, report.reused, report.complete) == (1145 - 384, 384, True)
        assert _has_index(conn, "fake-bulk")
        again = embed_missing(conn, _HashEmbedder())
        assert (again.embedded, again.reused) == (0, 1145)
