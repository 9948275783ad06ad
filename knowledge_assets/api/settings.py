"""Where the HTTP API listens, who may call it, and which database roles it uses."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from knowledge_assets.core.database import db
from knowledge_assets.core.settings import SourceSettings, env
from knowledge_assets.mcp.reader import reader_url

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
WRITER_ROLE = "ka_qa_writer"
WRITER_URL_ENV = "KA_QA_WRITER_URL"
TOKEN_ENV = "KA_API_TOKEN"


class ApiConfigError(ValueError):
    """The server cannot start as configured; the message says what to set."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def writer_url(store_url: str) -> str:
    """``KA_QA_WRITER_URL``, else the store URL as the ``ka_qa_writer`` role (no password)."""
    override = env(WRITER_URL_ENV)
    if override:
        return override
    info = conninfo_to_dict(store_url)
    info["user"] = WRITER_ROLE
    info.pop("password", None)
    return make_conninfo("", **info)


@dataclass(frozen=True)
class ApiSettings:
    """Host, port, the bearer token (required off loopback), the two role URLs and the local
    vault folder whose images the note view shows (None: the vault is a GitHub repository)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str = field(default="", repr=False)
    reader_url: str = field(default="", repr=False)
    writer_url: str = field(default="", repr=False)
    vault: Path | None = None

    @property
    def needs_token(self) -> bool:
        return bool(self.token) or not is_loopback(self.host)

    @classmethod
    def resolve(cls, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> ApiSettings:
        """Settings for ``host``/``port`` with the token (``KA_API_TOKEN``) and role URLs derived
        from the store (``DATABASE_URL`` or the embedded Postgres, migrated)."""
        token = env(TOKEN_ENV)
        if not is_loopback(host) and not token:
            raise ApiConfigError(
                f"serving on {host} exposes your notes beyond this machine: set {TOKEN_ENV} to a "
                "long random secret (clients send 'Authorization: Bearer <it>'), or bind 127.0.0.1"
            )
        store = db.store_url()
        source = SourceSettings.from_env()
        vault = source.vault_path if source.kind == "local" else None
        return cls(host, port, token, reader_url(store), writer_url(store), vault)
