"""Index sensors: none of their own. chunks and embeddings run in the same run the ingest
``source_changed_sensor`` requests (the whole graph), so nothing here has to watch for
upstream materializations."""
