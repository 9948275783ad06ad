"""Ingest only: sync the source and refresh ``latest_docs``."""

import dagster as dg

raw_docs_job = dg.define_asset_job(
    "raw_docs_job",
    selection=dg.AssetSelection.assets("raw_docs", "latest_docs"),
    description="Sync the vault (or GitHub repository) into raw_docs and refresh latest_docs; "
    "declared sources sync with embeddings_job and chunks_job.",
)
