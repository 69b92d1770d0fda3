"""A scripted OpenAI-compatible server on 127.0.0.1: `POST /v1/chat/completions` answers from a queue of replies.

A scripted reply is a content string (wrapped into a valid chat.completion), or an `LLMReply`: any status with
headers (429 + Retry-After, 5xx, 401), a delay past the client's timeout, or a 200 whose body is not a chat
completion. When the queue is empty a `responder(request_json) -> content` answers, so a test can reply from what
the prompt holds (see `citing_responder`). Every request's JSON body and Authorization header are recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
Responder = Callable[[dict[str, Any]], str]
# The provider lists evidence as `[id] (source) title` lines; a responder finds the citable ids this way.
_EVIDENCE_LINE = re.compile(r"^\[([^\]\s]+)\] \(", re.MULTILINE)


@dataclass
class LLMReply:
    content: str | None = None
    status: int = 200
    body: bytes | None = None  # a raw body, sent instead of a chat completion
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def text(cls, content: str) -> LLMReply:
        return cls(content=content)

    @classmethod
    def json(cls, payload: object) -> LLMReply:
        return cls(content=json.dumps(payload))

    @classmethod
    def error(cls, status: int, retry_after: str | None = None, body: str | None = None) -> LLMReply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, body=(body or f"error {status}").encode(), headers=headers)

    @classmethod
    def slow(cls, seconds: float, content: str = "{}") -> LLMReply:
        return cls(content=content, delay=seconds)

    @classmethod
    def malformed(cls, body: str = "<html>upstream proxy error</html>") -> LLMReply:
        return cls(body=body.encode(), headers={"Content-Type": "text/html"})

    @classmethod
    def raw_json(cls, payload: object) -> LLMReply:
        """A 200 JSON body that is not necessarily a chat completion (e.g. `{"choices": []}`)."""
        return cls(body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    json: dict[str, Any] | None
    authorization: str | None
    at: float

    @property
    def prompt(self) -> str:
        """Every message's content, joined: what the model was shown."""
        return prompt_of(self.json or {})


def prompt_of(request_json: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request_json.get("messages", []))


def evidence_ids(request_json: dict[str, Any]) -> list[str]:
    return _EVIDENCE_LINE.findall(prompt_of(request_json))


def citing_responder(request_json: dict[str, Any]) -> str:
    """A well-behaved generator: one claim per evidence item, each citing it, confidence 0.8."""
    ids = evidence_ids(request_json)
    claims = [{"text": f"Evidence {i} is relevant.", "citations": [i]} for i in ids]
    return json.dumps({"answer": " ".join(c["text"] for c in claims) or "The evidence does not say.",
                       "claims": claims, "citations": ids, "confidence": 0.8,
                       "reasoning_summary": "Each claim restates one evidence item."})


def completion(content: str, model: str, serial: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{serial}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class LLMServer:
    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._script: deque[LLMReply] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, paid at every test's teardown.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def bodies(self) -> list[dict[str, Any] | None]:
        return [r.json for r in self.requests]

    @property
    def authorizations(self) -> list[str | None]:
        return [r.authorization for r in self.requests]

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *replies: LLMReply | str) -> None:
        """Queue replies, consumed one per request; a plain string is the assistant's message content."""
        with self._lock:
            self._script.extend(LLMReply.text(r) if isinstance(r, str) else r for r in replies)

    def _next_reply(self, request_json: dict[str, Any] | None) -> LLMReply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None and request_json is not None:
            return LLMReply.text(self.responder(request_json))
        # 418 is never retried, so a test that under-scripts fails at once instead of backing off.
        return LLMReply.error(418, body="llm_server: script exhausted and no responder")

    def _record(self, path: str, raw: bytes, authorization: str | None) -> tuple[dict[str, Any] | None, int]:
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        with self._lock:
            self.requests.append(RecordedRequest(path, parsed, authorization, time.monotonic()))
            return parsed, len(self.requests)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path != CHAT_PATH:
                    self._send(LLMReply.error(404, body=f"no route {self.path}"))
                    return
                request_json, serial = server._record(self.path, raw, self.headers.get("Authorization"))
                reply = server._next_reply(request_json)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.body is None:
                    model = str((request_json or {}).get("model", "scripted"))
                    payload = completion(reply.content or "", model, serial)
                    reply = LLMReply(status=reply.status, body=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json", **reply.headers})
                self._send(reply)

            def _send(self, reply: LLMReply) -> None:
                body = reply.body or b""
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler
