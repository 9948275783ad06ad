"""Ingest checks."""
