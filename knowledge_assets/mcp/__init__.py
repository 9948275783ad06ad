"""The MCP server: read-only search over the knowledge store for LLM clients (Claude Desktop,
Claude Code, the MCP Inspector). ``knowledge_assets.mcp_server`` is the entry point."""

from knowledge_assets.mcp.reader import ReaderStore, check_note_path, reader_url
from knowledge_assets.mcp.tools import SERVER_NAME, KnowledgeTools, build_server

__all__ = [
    "SERVER_NAME",
    "KnowledgeTools",
    "ReaderStore",
    "build_server",
    "check_note_path",
    "reader_url",
]
