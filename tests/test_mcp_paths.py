"""MCP's note tools take a note's path as search_docs lists it: a path is only a key, so names
that look odd (a leading ``~`` or space, a backslash) are served, and paths that could only
mean somewhere else are still refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from knowledge_assets.core.embedders import Embedder
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from knowledge_assets.mcp.tools import KnowledgeTools
from tests.test_search import notes_store

ODD = ["~archive.md", " lead.md", "back\\slash.md"]


@pytest.fixture
def tools(server_url: str, tmp_path: Path, usem3: Embedder) -> Iterator[KnowledgeTools]:
    notes = {name: f"# {name.strip()}\n\n[[linked]] を見る。\n" for name in ODD}
    notes["linked.md"] = "# linked\n\nリンク先。\n"
    with notes_store(server_url, tmp_path, notes, usem3) as url:
        store = ReaderStore(reader_url(url))
        try:
            yield KnowledgeTools(store)
        finally:
            store.close()


@pytest.mark.parametrize("path", ODD)
def test_a_stored_path_is_served_as_it_is(tools: KnowledgeTools, path: str) -> None:
    """``~archive.md`` was refused as leaving the vault, `` lead.md`` looked up as ``lead.md``
    and ``back\\slash.md`` as ``back/slash.md``: notes search_docs listed could not be read."""
    assert f"# {path.strip()}" in str(tools.get_doc(path))
    similar = tools.similar_docs(path).structured_content
    assert similar["file_path"] == path and similar["similar"]
    linked = tools.linking_docs("linked.md").structured_content
    assert path in {n["path"] for n in linked["linking"]}
    assert tools.linking_docs(path).structured_content["file_path"] == path


@pytest.mark.parametrize("path", ["/linked.md", "../linked.md", "~/linked.md", "a\x00b"])
def test_a_path_no_note_has_is_still_refused(tools: KnowledgeTools, path: str) -> None:
    with pytest.raises(ToolError, match=r"refused|not a valid note path"):
        tools.get_doc(path)


def test_a_path_written_loosely_still_finds_its_note(tools: KnowledgeTools) -> None:
    assert "# linked" in str(tools.get_doc("./linked.md"))
