"""Reading one chat completion off the wire, whichever way the server sends it, with Flux's own stops.

Flux asks for a stream (`stream: true`, OpenAI's server-sent `chat.completion.chunk` events ending in
`data: [DONE]`), because closing a stream is how a client tells a server to stop generating (llama.cpp's servers,
vLLM and Ollama cancel on disconnect; a non-streamed request runs to its end). A server that ignores `stream` and
answers one `application/json` completion is read as well. Anything else (an HTML page from a proxy) is no reply.

While reading, Flux stops by itself — and reports it as `cut` — when:
- the reply's JSON object is complete and the model goes on writing after it (the stop condition JSON allows:
  no stop sequence can end an object, but its closing brace does);
- more content arrived than `max_tokens` allows (a server that ignores max_tokens); the reply is then unusable
  unless its JSON object was already complete;
- the caller cancels (the question's deadline passed): `Cancelled`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

# A chunk normally carries one token; a server may batch a few. Past this many chunks beyond max_tokens (or this
# many characters per allowed token) the server is not honouring max_tokens.
CHUNK_GRACE = 16
MAX_CHARS_PER_TOKEN = 16
ERROR_BODY_BYTES = 2_000


class Cancelled(Exception):
    """The caller gave up on the reply (its deadline passed); the stream was closed."""


class NotAReply(Exception):
    """The server's 2xx answer is not a chat completion (another content type, an error event, an empty choice)."""


@dataclass
class Reading:
    parts: list[str] = field(default_factory=list)
    chunks: int = 0
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cut: str = ""  # why Flux stopped reading before the server finished ("" when it finished)
    json_span: tuple[int, int] | None = None  # where the reply's first complete JSON object starts and ends

    @property
    def text(self) -> str:
        """The reply; when it holds a complete JSON object, that object alone (a fence or a ramble around it is
        no part of the answer)."""
        text = "".join(self.parts)
        if self.json_span is None and "}" in text:
            self.json_span = json_object_span(text)
        return text[self.json_span[0] : self.json_span[1]] if self.json_span else text


def json_object_span(text: str) -> tuple[int, int] | None:
    """Where the first complete top-level JSON object in `text` starts and ends (None: none is complete yet)."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return start, end


class ReplyReader:
    def __init__(self, max_tokens: int, expects_json: bool, cancelled: Callable[[], bool]) -> None:
        self.max_tokens = max_tokens
        self.expects_json = expects_json
        self.cancelled = cancelled

    def read(self, response: httpx.Response) -> Reading:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            return self._read_stream(response)
        if content_type == "application/json":
            return self._read_completion(response)
        body = self._body(response, ERROR_BODY_BYTES)
        raise NotAReply(
            f"the server answered {content_type or 'no content type'}, not a chat completion{snippet(body)}"
        )

    # --- server-sent events ----------------------------------------------------------------------------
    def _read_stream(self, response: httpx.Response) -> Reading:
        reading = Reading()
        for line in response.iter_lines():
            if self.cancelled():
                raise Cancelled
            if not line.startswith("data:"):
                continue  # event names, ids, ": keep-alive" comments
            data = line[5:].strip()
            if data == "[DONE]":
                return reading
            self._take_chunk(reading, data)
            if reading.cut:
                return reading
        if reading.finish_reason is None and not reading.parts:
            raise NotAReply("the stream ended without a reply or [DONE] (the server may have failed mid-answer)")
        return reading

    def _take_chunk(self, reading: Reading, data: str) -> None:
        try:
            chunk = json.loads(data)
        except ValueError:
            raise NotAReply(f"a stream event is not JSON{snippet(data)}") from None
        if not isinstance(chunk, dict):
            raise NotAReply(f"a stream event is not a chat.completion.chunk{snippet(data)}")
        if "error" in chunk:
            raise NotAReply(f"the server reported an error mid-stream: {error_message(chunk)}")
        if isinstance(chunk.get("usage"), dict):
            reading.usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return  # the usage-only chunk (stream_options.include_usage) has none
        choice = choices[0] if isinstance(choices[0], dict) else {}
        delta = choice.get("delta") or {}
        piece = delta.get("content") if isinstance(delta, dict) else None
        if choice.get("finish_reason"):
            reading.finish_reason = str(choice["finish_reason"])
        if isinstance(piece, str) and piece:
            reading.parts.append(piece)
            reading.chunks += 1
            self._check_stops(reading, piece)

    def _check_stops(self, reading: Reading, piece: str) -> None:
        if self.expects_json:
            if reading.json_span is None and "}" in piece:
                reading.json_span = json_object_span("".join(reading.parts))
            elif reading.json_span is not None and "".join(reading.parts)[reading.json_span[1] :].strip(" \n\r\t`"):
                reading.cut = "the model went on writing after its JSON object"
                return
        chars = sum(len(p) for p in reading.parts)
        if reading.chunks > self.max_tokens + CHUNK_GRACE or chars > self.max_tokens * MAX_CHARS_PER_TOKEN:
            reading.cut = f"the server went past max_tokens ({self.max_tokens}) without stopping"

    # --- one application/json completion -----------------------------------------------------------------
    def _read_completion(self, response: httpx.Response) -> Reading:
        body = self._body(response, None)
        try:
            payload = json.loads(body)
        except ValueError:
            raise NotAReply(f"the body is not JSON{snippet(body)}") from None
        if isinstance(payload, dict) and "error" in payload:
            raise NotAReply(f"the server reported an error: {error_message(payload)}")
        try:
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise NotAReply("the reply has no choices[0].message.content (an empty choice)") from None
        if not isinstance(content, str):
            raise NotAReply("choices[0].message.content is not text")
        reading = Reading(parts=[content], chunks=0, finish_reason=choice.get("finish_reason"))
        if isinstance(payload.get("usage"), dict):
            reading.usage = _usage(payload["usage"])
        return reading

    def _body(self, response: httpx.Response, limit: int | None) -> str:
        data = bytearray()
        for block in response.iter_bytes():
            if self.cancelled():
                raise Cancelled
            data += block
            if limit is not None and len(data) >= limit:
                break
        return data.decode("utf-8", "replace")


def _usage(raw: dict[str, Any]) -> dict[str, int]:
    return {k: int(v) for k, v in raw.items() if k in ("prompt_tokens", "completion_tokens") and isinstance(v, int)}


def error_message(payload: dict[str, Any]) -> str:
    """The message of an OpenAI-style error body (`{"error": {"message": …}}`, or a bare string)."""
    error = payload.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)[:300]
    return str(error or payload.get("detail") or payload)[:300]


def snippet(text: str) -> str:
    """`: ` and the first 200 characters of a body on one line, or nothing."""
    flat = " ".join(text.split())[:200]
    return f": {flat}" if flat else ""
