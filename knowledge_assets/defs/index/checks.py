"""Index checks."""
