"""A local HTTP server on 127.0.0.1 that stands in for remote APIs and injects faults on demand.

Routes answer from a script (a queue of responses per path, consumed one per request) and fall back to a fixed
body. Faults: any status with headers (429 + Retry-After, 5xx), a delay past the client's timeout, a body cut
short of its Content-Length, and a 200 with a malformed body. Every request is logged for assertions.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False

    @classmethod
    def ok(cls, body: str | bytes, content_type: str = "text/plain") -> Reply:
        data = body.encode() if isinstance(body, str) else body
        return cls(200, data, {"Content-Type": content_type})

    @classmethod
    def json(cls, body: str) -> Reply:
        return cls.ok(body, "application/json")

    @classmethod
    def error(cls, status: int, retry_after: str | None = None) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status, f"error {status}".encode(), headers)

    @classmethod
    def slow(cls, seconds: float, body: str = "late") -> Reply:
        return cls(200, body.encode(), {}, delay=seconds)

    @classmethod
    def truncated(cls, body: str) -> Reply:
        return cls(200, body.encode(), {"Content-Type": "application/json"}, truncate=True)


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float


class FaultServer:
    def __init__(self) -> None:
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.defaults: dict[str, Reply] = {}
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self.scripts[path].extend(replies)

    def default(self, path: str, reply: Reply) -> None:
        self.defaults[path] = reply

    def hits(self, path: str) -> list[LoggedRequest]:
        return [r for r in self.requests if r.path == path]

    def _next_reply(self, path: str) -> Reply:
        with self._lock:
            if self.scripts[path]:
                return self.scripts[path].popleft()
        return self.defaults.get(path, Reply(404, b"not found"))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.requests.append(LoggedRequest(self.command, parts.path, parse_qs(parts.query),
                                                     dict(self.headers), body, time.monotonic()))
                reply = server._next_reply(parts.path)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                declared = len(reply.body) * 2 if reply.truncate else len(reply.body)
                self.send_header("Content-Length", str(declared))
                if reply.truncate:
                    self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self.wfile.write(reply.body[: len(reply.body) // 2] if reply.truncate else reply.body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if reply.truncate:
                    self.close_connection = True

            do_GET = _serve
            do_POST = _serve

        return Handler
