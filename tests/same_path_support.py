"""A store where one path is held by several sources: the vault and the declared source
``archive`` both hold ``daily/2024-01-01.md``, and ``archive`` and ``journal`` both hold
``shared/memo.md``; ``ideas/plan.md`` is a draft in the vault and a current note in archive."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.core.sources.registry import KIND_DEFAULTS, SourceProfile, register
from tests.conftest import new_database

DAILY = "daily/2024-01-01.md"
SHARED = "shared/memo.md"
PLAN = "ideas/plan.md"  # a draft in the vault, a current note in archive
NOTES = {
    "local": {
        DAILY: "# 元日の散歩\n\n## 散歩\n\n元日は川沿いを散歩して、梅の花を見た。\n",
        "garden/梅.md": "# 梅の庭\n\n## 花\n\n庭の梅が咲いた。白い花が香る。\n",
    },
    "archive": {
        DAILY: "# 元日の読書\n\n## 読書\n\n元日は一日中『銀河鉄道の夜』を読んでいた。\n",
        "trains/夜行列車.md": "# 夜行列車\n\n## 旅\n\n夜行列車で北へ向かった。\n",
        SHARED: "# 保管庫のメモ\n\n## 覚え書き\n\n保管庫に残した覚え書き。\n",
        PLAN: "# 計画\n\n## 春\n\n春に京都へ行く。\n",
    },
    "journal": {
        SHARED: "# 日誌のメモ\n\n## 覚え書き\n\n日誌に残した覚え書き。\n",
    },
}
DRAFT = "---\ndraft: true\n---\n# 計画の下書き\n\n## 春\n\nまだ決めていない。\n"


@contextmanager
def same_path_store(
    server_url: str, embedder: Embedder, root: Path, notes: dict[str, dict[str, str]] = NOTES
) -> Iterator[str]:
    """A new database holding ``notes`` (source name -> path -> text; ``local`` is the vault,
    with the draft of PLAN, the others declared sources), synced, chunked and embedded."""
    with new_database(server_url) as url:
        db.migrate(url)
        with db.connect(url) as conn:
            for name, texts in notes.items():
                for path, text in (texts | ({PLAN: DRAFT} if name == "local" else {})).items():
                    (root / name / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / name / path).write_text(text, encoding="utf-8")
                if name != "local":
                    register(conn, SourceProfile(name, "local", *KIND_DEFAULTS["local"]))
                source = LocalSource(root / name, table=f"docs_{name}")
                sync_source(conn, source)
                refresh_latest(conn, source.table)
            refresh_chunks(conn, max_tokens=512)
            assert embed_missing(conn, embedder).active
        yield url
