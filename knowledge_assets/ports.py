"""Listening sockets for ``serve`` and ``mcp --transport http``, bound before the address is
announced, so a port in use is one error line rather than the announcement followed by the
server's bind error; ``dev`` makes the same check before it starts the UI."""

from __future__ import annotations

import socket
import sys


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; OSError when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def report_unusable(host: str, port: int, exc: OSError) -> None:
    """The two lines on stderr for a port that cannot be listened on."""
    print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
    print("  choose another port with --port, or stop what uses it", file=sys.stderr)
