"""The jobs of the index: the whole graph, and the graph up to the keyword index.

``embeddings_job`` runs from the source to the vectors of one model partition (partitioned
like ``embeddings``, by model, which Dagster infers from the selection). ``chunks_job`` stops at
``chunks``: notes are searchable by keyword as soon as it ends, and the vectors follow."""

import dagster as dg

embeddings_job = dg.define_asset_job(
    "embeddings_job",
    selection=dg.AssetSelection.assets("embeddings").upstream(),
    description="Sync every source, refresh latest_docs and chunks, and embed what is missing "
    "with the partition's model.",
)

chunks_job = dg.define_asset_job(
    "chunks_job",
    selection=dg.AssetSelection.assets("chunks").upstream(),
    description="Sync every source and refresh latest_docs and chunks, without embedding: "
    "notes are searchable by keyword at once, and the next embeddings run adds their vectors.",
)
