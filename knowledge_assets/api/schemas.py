"""Request bodies of the HTTP API (seed 001's API design), for validation and the OpenAPI docs."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


class DateRange(BaseModel):
    from_: date | None = Field(default=None, alias="from")
    to: date | None = None


class Filters(BaseModel):
    tags: list[str] | None = Field(default=None, description="notes with any of these tags")
    pathPrefix: str | None = Field(default=None, description="only notes under this folder")
    dateRange: DateRange | None = Field(default=None, description="inclusive bounds on created")


class SemanticSearch(BaseModel):
    query: str = Field(min_length=1, max_length=2000, description="what to look for")
    limit: int = Field(default=10, ge=1, le=100)
    threshold: float | None = Field(default=None, ge=-1, le=1, description="minimum cosine similarity (default: the model's)")  # fmt: skip
    filters: Filters | None = None


class HybridSearch(BaseModel):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=100)
    vectorWeight: float | None = Field(default=None, ge=0, le=10, description="weight of the vector list (default: tuned, 0.2)")  # fmt: skip
    keywordWeight: float | None = Field(default=None, ge=0, le=10, description="weight of the keyword list (default 1.0)")  # fmt: skip
    filters: Filters | None = None


class KeywordSearch(BaseModel):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=100)
    filters: Filters | None = None


class QAOptions(BaseModel):
    topK: int = Field(default=5, ge=1, le=20, description="notes retrieved")
    stream: bool = Field(default=False, description="answer as server-sent events")
    tags: list[str] | None = Field(default=None, description="only notes with any of these tags")


class QARequest(BaseModel):
    question: str = Field(min_length=1, max_length=2000)
    conversationId: str | None = Field(default=None, description="continue a conversation (from an earlier answer)")  # fmt: skip
    options: QAOptions = Field(default_factory=QAOptions)
