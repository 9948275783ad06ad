"""From a source to the latest documents: fetch and parse files (frontmatter, formats,
conventions), write the raw tables (:mod:`~knowledge_assets.core.ingest.sync`), and decide which
version of each note is the latest (:mod:`~knowledge_assets.core.ingest.latest`)."""
