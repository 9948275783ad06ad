"""Ingest sensors."""
