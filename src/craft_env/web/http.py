"""A small, bounded HTTP/1.1 server on asyncio streams: one request per connection, JSON in and out.

The standard library is enough for a page, its assets and a JSON API read
by long polling, and it keeps ``craft-env serve`` free of a new runtime
dependency. Everything a client sends is bounded: the request line and
each header line (``MAX_LINE``), the number of headers, the body
(``MAX_BODY``, by ``Content-Length``; chunked bodies are refused), the time
to send the head and the body (``HEAD_TIMEOUT``), and the connections open
at once (``max_connections``; more are answered 503). Anything malformed
is answered with a JSON error naming what is wrong, and the connection is
closed after every response.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

log = logging.getLogger(__name__)

MAX_LINE = 8_192
MAX_HEADERS = 64
MAX_BODY = 65_536
HEAD_TIMEOUT = 10.0
REASONS = {
    200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 411: "Length Required",
    413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
    429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
    501: "Not Implemented", 503: "Service Unavailable",
}
#: Sent with every response: the pages run only their own scripts and styles and talk only to this server.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class HttpError(Exception):
    """A request answered with ``status`` and a JSON ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        """The body read as JSON (``HttpError`` 415 or 400 when it is not a JSON object or list)."""
        if self.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise HttpError(415, "expected Content-Type: application/json")
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise HttpError(400, "the body is not valid JSON") from None

    def bearer(self) -> str | None:
        """The token of an ``Authorization: Bearer <token>`` header."""
        value = self.headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        return token.strip() or None if scheme.lower() == "bearer" else None


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Response:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        return cls(status, text.encode("ascii"))


Handler = Callable[[Request], Awaitable[Response]]


async def _line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise HttpError(431, f"a request line or header is longer than {MAX_LINE} bytes") from None
    except asyncio.IncompleteReadError:
        raise HttpError(400, "the request ended early") from None
    try:
        return raw.decode("ascii").rstrip("\r\n")
    except UnicodeDecodeError:
        raise HttpError(400, "the request head is not ASCII") from None


async def read_request(reader: asyncio.StreamReader) -> Request:
    """One request: its line, headers and body, each within the bounds of the module docstring."""
    parts = (await _line(reader)).split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, "expected a request line like 'GET /path HTTP/1.1'")
    method, target, _ = parts
    headers: dict[str, str] = {}
    while True:
        line = await _line(reader)
        if not line:
            break
        if len(headers) >= MAX_HEADERS:
            raise HttpError(431, f"more than {MAX_HEADERS} headers")
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise HttpError(400, "a header line without 'name: value'")
        headers[name.lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise HttpError(501, "chunked bodies are not accepted; send Content-Length")
    body = b""
    if method == "POST":
        length = headers.get("content-length")
        if length is None or not length.isdigit():
            raise HttpError(411, "a POST needs a Content-Length")
        if int(length) > MAX_BODY:
            raise HttpError(413, f"the body is larger than {MAX_BODY} bytes")
        try:
            body = await reader.readexactly(int(length))
        except asyncio.IncompleteReadError:
            raise HttpError(400, "the body ended early") from None
    url = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(url.query, max_num_fields=20).items()}
    return Request(method, url.path, query, headers, body)


def _head(response: Response) -> bytes:
    lines = [f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Error')}"]
    headers = {
        **SECURITY_HEADERS,
        "Content-Type": response.content_type,
        "Content-Length": str(len(response.body)),
        "Connection": "close",
        **response.headers,
    }
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


class Server:
    """Serves ``handler`` on ``host:port`` (port 0: any free port, read back from ``port``)."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0, max_connections: int = 256):
        self.handler = handler
        self.host = host
        self.port = port
        self.max_connections = max_connections
        self.open = 0
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_LINE)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end the requests in progress (a long poll would hold the close up)."""
        if self._server is None:
            return
        self._server.close()
        handlers = [task for task in self._handlers if not task.done()]
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        try:
            await self._answer(reader, writer)
        except asyncio.CancelledError:  # the server is closing: the connection just ends
            writer.close()
        finally:
            self._handlers.discard(task)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open >= self.max_connections:
            await self._send(writer, Response.json({"error": "too many connections; try again"}, 503))
            return
        self.open += 1
        try:
            try:
                request = await asyncio.wait_for(read_request(reader), HEAD_TIMEOUT)
                response = await self.handler(request)
            except asyncio.TimeoutError:
                response = Response.json({"error": f"the request took longer than {HEAD_TIMEOUT:g} s"}, 408)
            except HttpError as error:
                response = Response.json({"error": str(error)}, error.status)
            except Exception:  # a bug answers 500 with no detail; the server goes on
                log.exception("request failed")
                response = Response.json({"error": "internal error"}, 500)
            await self._send(writer, response)
        finally:
            self.open -= 1

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, response: Response) -> None:
        try:
            writer.write(_head(response) + response.body)
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
