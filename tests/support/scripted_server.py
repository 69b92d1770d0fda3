"""The base of the local test servers (fault_server.py, llm_server.py): a threaded HTTP server on 127.0.0.1, on a
free port, that records every request and answers each with the `Reply` its subclass picks in `reply_to`.

A Reply can be any fault a remote API produces: any status with headers (429 + Retry-After, 5xx), a delay past the
client's timeout, a body cut short of its Content-Length, or a 200 whose body is not what the endpoint promises. A
streamed Reply (`events`) is sent chunk by chunk (HTTP/1.1 chunked transfer), optionally paced and optionally
endless; the server records when a client leaves mid-stream (`disconnects`) and how many requests it served at once
(`max_in_flight`).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering: past the client's timeout, a timeout
    truncate: bool = False  # send half the body and close, though Content-Length promised all of it
    events: tuple[bytes, ...] | None = None  # a streamed body: these chunks, in order
    event_delay: float = 0.0  # seconds before each streamed chunk
    endless: bytes | None = None  # after `events`, this chunk again and again until the client leaves

    @classmethod
    def ok(cls, body: str | bytes, content_type: str = "text/plain") -> Reply:
        data = body.encode() if isinstance(body, str) else body
        return cls(200, data, {"Content-Type": content_type})

    @classmethod
    def json(cls, body: str) -> Reply:
        return cls.ok(body, "application/json")

    @classmethod
    def error(cls, status: int, retry_after: str | None = None, body: str | None = None) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status, (body or f"error {status}").encode(), headers)

    @classmethod
    def slow(cls, seconds: float, body: str = "late") -> Reply:
        return cls(200, body.encode(), delay=seconds)

    @classmethod
    def truncated(cls, body: str) -> Reply:
        return cls(200, body.encode(), {"Content-Type": "application/json"}, truncate=True)

    @classmethod
    def malformed(cls, body: str = "<html>upstream proxy error</html>") -> Reply:
        """A 200 with an HTML page where JSON was promised: what a proxy in between sends."""
        return cls.ok(body, "text/html")


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival, to measure the client's waits

    @property
    def authorization(self) -> str | None:
        return self.headers.get("Authorization")

    @property
    def json(self) -> Any:
        """The JSON body, or None when there is none or it is not JSON."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


class ScriptedServer:
    """Binding, recording and sending live here; a subclass only decides which Reply answers a request."""

    request_type: type[RecordedRequest] = RecordedRequest  # a subclass may record a richer view

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.disconnects: list[RecordedRequest] = []  # requests whose client closed the stream before its end
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _bind_fresh_port(_handler_for(self))
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, paid at every test's teardown.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def hits(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def reply_to(self, request: RecordedRequest) -> Reply:
        raise NotImplementedError

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _track(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _client_left(self, request: RecordedRequest) -> None:
        with self._lock:
            self.disconnects.append(request)


# Ports a server of this process has had. Flux's rate limiters are process-wide per host:port, so a server on a
# port an earlier server had would inherit the pace an earlier test's client set for it.
_PORTS_USED: set[int] = set()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (Flux cancelling a request at its deadline) is expected, not a server fault.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _bind_fresh_port(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    rejected = []
    while True:
        httpd = _Server(("127.0.0.1", 0), handler)
        port = httpd.server_address[1]
        if port not in _PORTS_USED:
            _PORTS_USED.add(port)
            for other in rejected:
                other.server_close()
            return httpd
        rejected.append(httpd)  # held open until a fresh port is found, so the OS cannot offer it again


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive and Content-Length framing, as the real APIs answer

        def log_message(self, *args: object) -> None:  # keep test output clean
            return

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            request = server.request_type(
                self.command,
                parts.path,
                parse_qs(parts.query),
                dict(self.headers),
                self.rfile.read(length) if length else b"",
                time.monotonic(),
            )
            server._record(request)
            server._track(+1)
            try:
                reply = server.reply_to(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.events is not None:
                    self._stream(reply, request)
                else:
                    self._send(reply)
            finally:
                server._track(-1)

        do_GET = _serve
        do_POST = _serve
        do_HEAD = _serve  # answered with the GET's headers and no body

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            declared = len(reply.body) * 2 if reply.truncate else len(reply.body)
            self.send_header("Content-Length", str(declared))
            if reply.truncate:
                self.send_header("Connection", "close")
            self.end_headers()
            try:
                if self.command != "HEAD":
                    self.wfile.write(reply.body[: len(reply.body) // 2] if reply.truncate else reply.body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)
            if reply.truncate:
                self.close_connection = True

        def _stream(self, reply: Reply, request: RecordedRequest) -> None:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            endless = itertools.repeat(reply.endless, STREAM_SAFETY_CHUNKS) if reply.endless else ()
            try:
                for chunk in itertools.chain(reply.events or (), endless):
                    if reply.event_delay:
                        time.sleep(reply.event_delay)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                server._client_left(request)
                self.close_connection = True

    return Handler


# An endless stream stops after this many chunks, so a client that never leaves cannot hold a test thread forever.
STREAM_SAFETY_CHUNKS = 20_000
