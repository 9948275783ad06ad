"""``KnowledgeSource``: one declared source of notes, books or bookmarks, as a Dagster component.

A folder ``knowledge_assets/defs/sources/<name>/`` holding a ``defs.yaml`` declares a source:

```yaml
type: knowledge_assets.components.KnowledgeSource
attributes:
  name: books                # raw.docs_books, asset raw_docs_books
  kind: books                # local | github | books | bookmarks
  path: "{{ env.BOOKS_PATH }}"
  chunking:
    strategy: headings       # headings | size | document | scene | recursive
```

Each source becomes its own ``raw_docs_<name>`` asset (with checks, a sensor and a job that
syncs it and refreshes everything downstream), and feeds ``latest_docs``. Deleting the folder (or
its ``defs.yaml``) removes the source: the next ``latest_docs`` run deletes its notes and says so.
"""

from __future__ import annotations

from typing import Literal

import dagster as dg
from pydantic import Field

from knowledge_assets.core.chunks.strategies import ChunkingOptions
from knowledge_assets.core.database.db import PROJECT_ROOT
from knowledge_assets.core.sources.registry import KIND_DEFAULTS, SourceProfile

Kind = Literal["local", "github", "books", "bookmarks"]
Strategy = Literal["headings", "size", "document", "scene", "recursive"]


class Chunking(dg.Model):
    """How this source's documents are cut into chunks (seed 002)."""

    strategy: Strategy = Field(
        default="headings",
        description="headings: one chunk per ## section (notes). size: whole document up to "
        "small_max_chars, ## scenes up to scene_max_chars, recursive above. document, scene, "
        "recursive: always that one.",
    )
    small_max_chars: int = 3000
    scene_max_chars: int = 15000
    max_chunk_chars: int = Field(default=5000, description="a longer scene is split recursively")
    chunk_chars: int = Field(default=400, description="target size of a recursive chunk")
    overlap: float = Field(
        default=0.15, description="share of a recursive chunk repeated in the next"
    )
    scene_overlap: float = Field(default=0.10, description="share of a scene opening the next one")
    inherit: list[str] = Field(
        default_factory=lambda: ["characters", "settings", "chapter_id"],
        description="frontmatter fields copied into every chunk's metadata and embedding text",
    )

    def options(self) -> ChunkingOptions:
        return ChunkingOptions(**{**self.model_dump(), "inherit": tuple(self.inherit)})


class SourceParams(dg.Model):
    """``dg scaffold defs knowledge_assets.components.KnowledgeSource sources/books
    --kind books --path ~/books``: the folder name becomes the source name."""

    kind: Kind = "local"
    path: str = ""


class SourceScaffolder(dg.Scaffolder[SourceParams]):
    """Writes a ``defs.yaml`` that loads as is: the name from the folder, the kind and path given."""

    @classmethod
    def get_scaffold_params(cls) -> type[SourceParams]:
        return SourceParams

    def scaffold(self, request: dg.ScaffoldRequest[SourceParams]) -> None:
        name = request.target_path.name.lower().replace("-", "_")
        path = request.params.path or f"{{{{ env.KA_{name.upper()}_PATH }}}}"
        attributes: dict[str, object] = {"name": name, "kind": request.params.kind}
        if request.params.kind == "github":
            attributes.update(repo="owner/name", branch="main")
        else:
            attributes["path"] = path
        dg.scaffold_component(request, attributes)


@dg.scaffold_with(SourceScaffolder)
class KnowledgeSource(dg.Component, dg.Model, dg.Resolvable):
    """A source of documents for the knowledge store: a notes folder, a GitHub repository, a
    books folder (Markdown without frontmatter) or a bookmarks folder (article JSON)."""

    name: str = Field(description="lower-case identifier: raw.docs_<name>, asset raw_docs_<name>")
    kind: Kind = Field(description="local | github | books | bookmarks")
    path: str | None = Field(default=None, description="the folder (local, books, bookmarks)")
    repo: str | None = Field(default=None, description="owner/name (github)")
    branch: str = "main"
    prefix: str = Field(default="", description="only files under this folder of the repository")
    token_env: str = Field(
        default="GITHUB_TOKEN", description="environment variable holding the token"
    )
    base_url: str = "https://api.github.com"
    type: Literal["markdown_note", "bookmark_json"] | None = Field(
        default=None, description="markdown_note or bookmark_json: set by the kind"
    )
    content_type: str | None = Field(
        default=None, description="notes, books or articles (from the kind)"
    )
    default_heading: str | None = Field(
        None, description="top_heading of a document without a frontmatter heading"
    )
    chunking: Chunking = Field(default_factory=lambda: Chunking())
    sensor_interval_s: int = Field(
        default=30, description="how often the sensor reads the source head"
    )

    def profile(self) -> SourceProfile:
        """The source as the core sees it (validated: name, kind, chunking)."""
        doc_type, content_type = KIND_DEFAULTS[self.kind]
        heading = self.default_heading
        if heading is None and self.kind == "books":
            heading = "unknown"  # seed 004: books have no frontmatter heading
        return SourceProfile(
            name=self.name,
            kind=self.kind,
            doc_type=self.type or doc_type,
            content_type=self.content_type or content_type,
            default_heading=heading,
            chunking=self.chunking.options(),
        )

    def settings(self) -> dict[str, str]:
        """Where to read from; a relative folder is relative to the project folder."""
        from pathlib import Path

        from knowledge_assets.core.settings import env

        path = ""
        if self.path:
            folder = Path(self.path).expanduser()
            path = str(folder if folder.is_absolute() else PROJECT_ROOT / folder)
        return {
            "path": path,
            "repo": self.repo or "",
            "branch": self.branch,
            "prefix": self.prefix,
            "base_url": self.base_url,
            "token": env(self.token_env) if self.kind == "github" else "",
        }

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        from knowledge_assets.defs.ingest.source_defs import source_definitions

        try:
            profile = self.profile()
        except ValueError as exc:
            raise dg.DagsterInvalidDefinitionError(f"source {self.name!r}: {exc}") from None
        return source_definitions(profile, self.settings, self.sensor_interval_s)
