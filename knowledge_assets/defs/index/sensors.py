"""Index sensors: none of their own. chunks and embeddings run in the same run the ingest
``source_changed_sensor`` requests (the whole graph); after a run of part of the graph, their
automation conditions (``knowledge_assets.defs.automation``) bring them up to date."""
