"""The HTTP API and search page: ``knowledge-assets serve``."""

from knowledge_assets.api.app import create_app
from knowledge_assets.api.settings import ApiConfigError, ApiSettings

__all__ = ["ApiConfigError", "ApiSettings", "create_app"]
