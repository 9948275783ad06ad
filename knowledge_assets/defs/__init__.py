"""Dagster definitions, one folder per capability; loaded by ``dg.load_from_defs_folder``."""
