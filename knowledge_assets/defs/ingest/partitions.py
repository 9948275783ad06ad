"""Ingest is not partitioned: a sync is always relative to the source's last synced head."""
