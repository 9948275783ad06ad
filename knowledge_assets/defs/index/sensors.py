"""Index sensors."""
