"""Plain-Python core, one package per capability: ``ingest`` (sources to latest documents),
``chunks`` (chunking and keyword tokens), ``index`` (vectors and their index), ``search``,
``database`` (the store), ``embedders`` and ``sources``; settings, secrets, progress, failures,
preflight checks and the worker processes of a first build are shared by all of them.

Nothing under this package imports dagster; the asset layer in ``knowledge_assets.defs`` calls it.
"""
