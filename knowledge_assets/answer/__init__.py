"""Answers from the notes (seed 001's RAG pipeline), offline by default, with an LLM when one is
configured. Plain Python: the CLI, the HTTP API and the page all call :class:`Asker`."""

from knowledge_assets.answer.config import LLMConfigError, LLMSettings
from knowledge_assets.answer.llm import LLMClient, LLMError
from knowledge_assets.answer.pipeline import Answer, Asker, Event, Source, Turn
from knowledge_assets.answer.prompt import NOT_FOUND, SYSTEM_PROMPT

__all__ = [
    "NOT_FOUND",
    "SYSTEM_PROMPT",
    "Answer",
    "Asker",
    "Event",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMSettings",
    "Source",
    "Turn",
]
