"""A scripted OpenAI-compatible server: `POST /v1/chat/completions` answers from a queue of replies.

It enforces the request shape OpenAI documents for `response_format` (API reference, Chat Completions: `text`,
`json_object` or `json_schema`; a `json_schema` format has a `name` of a-z, A-Z, 0-9, `_` and `-`, at most 64
characters, and a `schema` object; Structured Outputs guide, "Supported schemas": with `strict: true` every object —
nested ones, array items and `anyOf` branches included — sets `additionalProperties: false` and lists every property
in `required`). A request that breaks it gets OpenAI's 400 `invalid_request_error` body, as the real API answers.

A scripted reply is a content string (wrapped into a valid chat.completion) or an `LLMReply`: content, possibly
late (past the client's timeout), or a raw HTTP Reply sent as it is (429 + Retry-After, 5xx, 401, a body cut short,
a 200 that is not a chat completion). When the queue is empty a `responder(request_json) -> content` answers, so a
test can reply from what the prompt holds (see `citing_responder`). Serving, recording and the faults come from the
ScriptedServer base (scripted_server.py).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tests.support.scripted_server import RecordedRequest, Reply, ScriptedServer

CHAT_PATH = "/v1/chat/completions"
Responder = Callable[[dict[str, Any]], str]
# The provider lists evidence as `[id] (source) title` lines; a responder finds the citable ids this way.
_EVIDENCE_LINE = re.compile(r"^\[([^\]\s]+)\] \(", re.MULTILINE)
# ... and each item's text is the block under that line, up to the next item.
_EVIDENCE_BLOCK = re.compile(r"^\[([^\]\s]+)\] \([^\n]*\n(.*?)(?=\n\n\[[^\]\s]+\] \(|\Z)", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class LLMReply:
    content: str | None = None  # the assistant message, wrapped into a chat.completion
    raw: Reply | None = None  # sent as it is instead: an error status, a malformed or truncated body
    delay: float = 0.0

    @classmethod
    def text(cls, content: str) -> LLMReply:
        return cls(content=content)

    @classmethod
    def json(cls, payload: object) -> LLMReply:
        return cls(content=json.dumps(payload))

    @classmethod
    def error(cls, status: int, retry_after: str | None = None, body: str | None = None) -> LLMReply:
        return cls(raw=Reply.error(status, retry_after, body))

    @classmethod
    def slow(cls, seconds: float, content: str = "{}") -> LLMReply:
        return cls(content=content, delay=seconds)

    @classmethod
    def malformed(cls, body: str = "<html>upstream proxy error</html>") -> LLMReply:
        return cls(raw=Reply.malformed(body))

    @classmethod
    def truncated(cls, content: str = "{}") -> LLMReply:
        """A chat completion cut off half-way, the connection closed: a proxy or server dying mid-answer."""
        return cls(raw=Reply.truncated(json.dumps(completion(content, "scripted", 0))))

    @classmethod
    def raw_json(cls, payload: object) -> LLMReply:
        """A 200 JSON body that is not necessarily a chat completion (e.g. `{"choices": []}`)."""
        return cls(raw=Reply.json(json.dumps(payload)))


@dataclass(frozen=True)
class ChatRequest(RecordedRequest):
    @property
    def prompt(self) -> str:
        """Every message's content, joined: what the model was shown."""
        return prompt_of(self.json or {})


def prompt_of(request_json: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request_json.get("messages", []))


def evidence_ids(request_json: dict[str, Any]) -> list[str]:
    return _EVIDENCE_LINE.findall(prompt_of(request_json))


def evidence_texts(request_json: dict[str, Any]) -> dict[str, str]:
    """Each evidence id with its text as the model was shown it."""
    return {i: text.strip() for i, text in _EVIDENCE_BLOCK.findall(prompt_of(request_json))}


def first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".…").strip()


def citing_responder(request_json: dict[str, Any]) -> str:
    """A well-behaved generator: one claim per evidence item, stating the item's first sentence and citing it (so
    the grounding check finds it supported), confidence 0.8."""
    texts = evidence_texts(request_json)
    ids = evidence_ids(request_json)
    claims = [{"text": (first_sentence(texts.get(i, "")) or f"Evidence {i} is relevant") + ".", "citations": [i]}
              for i in ids]
    return json.dumps({"answer": " ".join(c["text"] for c in claims) or "The evidence does not say.",
                       "claims": claims, "citations": ids, "confidence": 0.8,
                       "reasoning_summary": "Each claim restates one evidence item."})


def completion(content: str, model: str, serial: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{serial}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class LLMServer(ScriptedServer):
    request_type = ChatRequest
    requests: list[ChatRequest]  # request_type makes every record a ChatRequest

    def __init__(self, responder: Responder | None = None) -> None:
        super().__init__()
        self.responder = responder
        self._script: deque[LLMReply] = deque()
        self._plans: deque[LLMReply] = deque()  # replies to plan requests (structured output), in their own queue
        self._serials = itertools.count(1)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def bodies(self) -> list[dict[str, Any] | None]:
        return [r.json for r in self.requests]

    @property
    def authorizations(self) -> list[str | None]:
        return [r.authorization for r in self.requests]

    def script(self, *replies: LLMReply | str) -> None:
        """Queue replies, consumed one per request; a plain string is the assistant's message content."""
        with self._lock:
            self._script.extend(LLMReply.text(r) if isinstance(r, str) else r for r in replies)

    def script_plans(self, *replies: LLMReply | str) -> None:
        """Queue replies to plan requests (structured output against a json_schema); without any, a plan request
        gets the responder's reply, else a plan that leaves the question to the literature (`SEARCH_PLAN`)."""
        with self._lock:
            self._plans.extend(LLMReply.text(r) if isinstance(r, str) else r for r in replies)

    def reply_to(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != CHAT_PATH:
            return Reply.error(404, body=f"no route {request.method} {request.path}")
        problem = response_format_problem((request.json or {}).get("response_format"))
        if problem:
            return invalid_request(problem, "response_format")
        reply = self._next_reply(request.json)
        if reply.raw is not None:
            return replace(reply.raw, delay=reply.delay) if reply.delay else reply.raw
        model = str((request.json or {}).get("model", "scripted"))
        body = json.dumps(completion(reply.content or "", model, next(self._serials)))
        return replace(Reply.json(body), delay=reply.delay)

    def _next_reply(self, request_json: dict[str, Any] | None) -> LLMReply:
        if is_plan_request(request_json):
            with self._lock:
                if self._plans:
                    return self._plans.popleft()
            if self.responder is not None and request_json is not None:
                return LLMReply.text(self.responder(request_json))
            return LLMReply.text(SEARCH_PLAN)
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None and request_json is not None:
            return LLMReply.text(self.responder(request_json))
        # 418 is never retried, so a test that under-scripts fails at once instead of backing off.
        return LLMReply.error(418, body="llm_server: script exhausted and no responder")


_SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# A plan that reads the question as a literature search, naming nothing: what a model says of a question it has no
# typed reading for.
SEARCH_PLAN = json.dumps({"operation": "search", "relation": None, "subjects": [], "objects": [], "returns": None,
                          "depth": None, "source": "", "field": None, "scope": None})


def is_plan_request(request_json: dict[str, Any] | None) -> bool:
    """A request for structured output against a json_schema: Flux asks for a plan this way."""
    fmt = (request_json or {}).get("response_format")
    return isinstance(fmt, dict) and fmt.get("type") == "json_schema"


def invalid_request(message: str, param: str) -> Reply:
    """OpenAI's error body for a request it will not run."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    return Reply(400, json.dumps(body).encode(), {"Content-Type": "application/json"})


def response_format_problem(response_format: Any) -> str:
    """What is wrong with a request's `response_format`, as the API would reject it ('' when nothing)."""
    if response_format is None:
        return ""
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind in ("text", "json_object"):
        return ""
    if kind != "json_schema":
        return f"Invalid value for 'response_format.type': {kind!r}"
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict) or not _SCHEMA_NAME.match(str(spec.get("name", ""))):
        return "Missing or invalid 'response_format.json_schema.name'"
    if not isinstance(spec.get("schema"), dict):
        return "Missing 'response_format.json_schema.schema'"
    return _strict_problem(spec["schema"], "schema") if spec.get("strict") else ""


def _strict_problem(schema: dict[str, Any], where: str) -> str:
    if schema.get("type") == "object":
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return f"Invalid schema for response_format: In context={where}, 'additionalProperties' is required to " \
                   "be supplied and to be false"
        if sorted(schema.get("required", [])) != sorted(properties):
            return f"Invalid schema for response_format: In context={where}, 'required' is required to be supplied " \
                   "and to be an array including every key in properties"
        for name, child in properties.items():
            if problem := _strict_problem(child, f"{where}.properties.{name}"):
                return problem
    if isinstance(schema.get("items"), dict) and (problem := _strict_problem(schema["items"], f"{where}.items")):
        return problem
    for n, branch in enumerate(schema.get("anyOf", [])):
        if problem := _strict_problem(branch, f"{where}.anyOf.{n}"):
            return problem
    return ""
