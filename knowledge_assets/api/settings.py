"""Where the HTTP API listens, who may call it, by which host names, and which database roles
it uses."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from knowledge_assets.core.database import db
from knowledge_assets.core.settings import SourceSettings, env, env_list
from knowledge_assets.mcp.reader import reader_url

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
WRITER_ROLE = "ka_qa_writer"
WRITER_URL_ENV = "KA_QA_WRITER_URL"
TOKEN_ENV = "KA_API_TOKEN"
HOSTS_ENV = "KA_API_HOSTS"
# A Host header: a name or an IPv4 address, or an IPv6 address in brackets, and maybe a port.
# Anything else (``user@host``, a path, spaces) is no host a browser sends.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::[0-9]{1,5})?", re.I)


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


def host_name(value: str) -> str | None:
    """The host named by a Host header or a ``KA_API_HOSTS`` entry (``name``, ``name:port``,
    ``[::1]:port``), lowercased and without port or brackets; None when ``value`` is none."""
    found = _HOST.fullmatch(value.strip())
    if found is None:
        return None
    return (found["v6"] or found["name"]).lower().rstrip(".") or None


def _extra_hosts() -> tuple[str, ...]:
    """``KA_API_HOSTS``: the host names the server answers to besides loopback's."""
    names = []
    for entry in env_list(HOSTS_ENV, ()):
        name = host_name(entry)
        if name is None:
            raise ApiConfigError(
                f"{HOSTS_ENV}: {entry!r} is not a host name; list the names (or addresses) "
                "clients use to reach the server, comma-separated, e.g. notes.lan,192.168.1.20"
            )
        names.append(name)
    return tuple(names)


def writer_url(store_url: str) -> str:
    """``KA_QA_WRITER_URL``, else the store URL as the ``ka_qa_writer`` role (no password)."""
    override = env(WRITER_URL_ENV)
    if override:
        db.check_url(override, WRITER_URL_ENV)
        return override
    info = conninfo_to_dict(store_url)
    info["user"] = WRITER_ROLE
    info.pop("password", None)
    return make_conninfo("", **info)


@dataclass(frozen=True)
class ApiSettings:
    """Host, port, the bearer token (required off loopback), the two role URLs, the host names
    clients may use besides loopback's (``KA_API_HOSTS``) and the local vault folder whose images
    the note view shows (None: the vault is a GitHub repository)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str = field(default="", repr=False)
    reader_url: str = field(default="", repr=False)
    writer_url: str = field(default="", repr=False)
    hosts: tuple[str, ...] = ()
    vault: Path | None = None

    @property
    def needs_token(self) -> bool:
        return bool(self.token) or not is_loopback(self.host)

    def answers_to(self, host_header: str | None) -> bool:
        """Whether a request's Host header names this server: ``localhost`` or a loopback
        address, the address it is bound to, or a ``KA_API_HOSTS`` name. A web page that had its
        own name resolve to 127.0.0.1 (DNS rebinding) sends its own name, and is refused."""
        name = host_name(host_header or "")
        if name is None:
            return False
        return is_loopback(name) or name in (self.host.strip("[]").lower(), *self.hosts)

    @classmethod
    def resolve(cls, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> ApiSettings:
        """Settings for ``host``/``port`` with the token (``KA_API_TOKEN``), the extra host names
        (``KA_API_HOSTS``) and role URLs derived from the store (``DATABASE_URL`` or the embedded
        Postgres, migrated)."""
        token, hosts = env(TOKEN_ENV), _extra_hosts()
        if not is_loopback(host) and not token:
            raise ApiConfigError(
                f"serving on {host} exposes your notes beyond this machine: set {TOKEN_ENV} to a "
                "long random secret (clients send 'Authorization: Bearer <it>'), or bind 127.0.0.1"
            )
        store = db.store_url()
        source = SourceSettings.from_env()
        vault = source.vault_path if source.kind == "local" else None
        return cls(host, port, token, reader_url(store), writer_url(store), hosts, vault)
