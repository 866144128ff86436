"""Kept-alive HTTP(S) connections, one per calling thread.

Every benchmark client thread owns one connection for its whole life: no pool lookups, no TLS
handshake per request, and no lock shared between threads.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from urllib.parse import urlsplit

from botocore.httpsession import get_cert_path

# A reused connection the server already closed fails before any byte of the answer arrives;
# resending then is safe and is what every HTTP client does.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.BadStatusLine)


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Transport:
    """POSTs to one base URL (``http://host:port`` or ``https://host``) over per-thread connections."""

    def __init__(self, base_url: str, *, connect_timeout_s: float, read_timeout_s: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"endpoint URL {base_url!r} is not http(s)://host[:port]")
        self.scheme = parts.scheme
        self.hostname = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        default_port = (parts.scheme == "https" and self.port == 443) or (
            parts.scheme == "http" and self.port == 80
        )
        self.host_header = self.hostname if default_port else f"{self.hostname}:{self.port}"
        self.path_prefix = parts.path.rstrip("/")
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self._local = threading.local()
        # The CA bundle boto3 itself verifies AWS endpoints with (certifi's, else botocore's own).
        self._context = (
            ssl.create_default_context(cafile=get_cert_path(True)) if self.scheme == "https" else None
        )

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            if self._context is not None:
                connection = http.client.HTTPSConnection(
                    self.hostname, self.port, timeout=self.connect_timeout_s, context=self._context
                )
            else:
                connection = http.client.HTTPConnection(
                    self.hostname, self.port, timeout=self.connect_timeout_s
                )
            connection.connect()
            sock = connection.sock
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(self.read_timeout_s)
            self._local.connection = connection
        return connection

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
        self._local.connection = None

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """One POST; raises ``TimeoutError`` on a read timeout and ``OSError`` on connection failures."""
        for attempt in (0, 1):
            reused = getattr(self._local, "connection", None) is not None
            try:
                connection = self._connection()
                connection.request("POST", self.path_prefix + path, body=body, headers=headers)
                answer = connection.getresponse()
                payload = answer.read()
            except _STALE:
                self._drop()
                if attempt or not reused:
                    raise
                continue
            except (OSError, http.client.HTTPException):
                self._drop()
                raise
            if answer.will_close:
                self._drop()
            return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, payload)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the calling thread's connection."""
        self._drop()
