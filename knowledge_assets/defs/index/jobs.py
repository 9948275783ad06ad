"""The main job: the whole graph, from the source to the vectors of one model partition
(partitioned like ``embeddings``, by model, which Dagster infers from the selection)."""

import dagster as dg

embeddings_job = dg.define_asset_job(
    "embeddings_job",
    selection=dg.AssetSelection.assets("embeddings").upstream(),
    description="Sync the source, refresh latest_docs and chunks, and embed what is missing "
    "with the partition's model.",
)
