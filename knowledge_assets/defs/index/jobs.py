"""The main job: the whole graph, from the source to the vectors of one model partition."""

import dagster as dg

from knowledge_assets.defs.index.partitions import embedding_models

embeddings_job = dg.define_asset_job(
    "embeddings_job",
    selection=dg.AssetSelection.assets("embeddings").upstream(),
    partitions_def=embedding_models,
    description="Sync the source, refresh latest_docs and chunks, and embed what is missing "
    "with the partition's model.",
)
