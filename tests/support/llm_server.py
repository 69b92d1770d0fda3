"""A scripted OpenAI-compatible server: `POST /v1/chat/completions` answers from a queue of replies, `GET /v1/models`
lists its models.

It enforces what OpenAI's API reference documents for Chat Completions (https://platform.openai.com/docs/api-reference/chat/create):
- `model` is required and must be one the server has: otherwise 404 with code `model_not_found`;
- `messages` is a non-empty list; `max_tokens` an integer of at least 1; `stream_options` "only set this when you set
  stream: true" (400 `invalid_request_error` otherwise);
- `response_format` is `text`, `json_object` or `json_schema`; a `json_schema` has a `name` of a-z, A-Z, 0-9, `_` and
  `-`, at most 64 characters, and a `schema` object; with `strict: true` every object — nested ones, array items and
  `anyOf` branches included — sets `additionalProperties: false` and lists every property in `required`
  (Structured Outputs guide, "Supported schemas"). `json_modes` narrows what a server accepts, as servers that
  implement less than OpenAI do (llama-cpp-python's server takes only `text` and `json_object`);
- `max_tokens` caps the completion: the reply stops there with `finish_reason: "length"` (unless the scripted reply
  is one of a server that ignores it);
- `stream: true` answers `text/event-stream`: `data: {chat.completion.chunk}` events (the first with the assistant
  role, then content deltas, then an empty delta with the finish_reason), then — with `stream_options.include_usage` —
  a chunk whose `choices` is empty and whose `usage` counts the whole request, then `data: [DONE]` (API reference,
  "The chat completion chunk object" and "stream_options").
A request that breaks a rule gets OpenAI's error body (`{"error": {"message", "type", "param", "code"}}`).

A scripted reply is a content string or an `LLMReply`: content (possibly late, possibly streamed slowly, possibly
followed by a ramble, possibly endless), or a raw HTTP Reply sent as it is (429 + Retry-After, 5xx, 401, an HTML
page, a body cut short, a 200 that is not a chat completion). A "token" here is a whitespace-led word. When the
queue is empty a `responder(request_json) -> content` answers (see `citing_responder`). Serving, recording,
streaming and the faults come from the ScriptedServer base (scripted_server.py).
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
MODELS_PATH = "/v1/models"
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
    ramble: str = ""  # what the model writes after `content` when nothing stops it
    ignores_max_tokens: bool = False  # a server that generates past max_tokens
    endless: bool = False  # streamed: after the content, more words until the client leaves
    token_delay: float = 0.0  # streamed: seconds before each token

    @classmethod
    def rambling(
        cls, content: str, ramble: str = " And there is more to say about this.", ignores_max_tokens: bool = False
    ) -> LLMReply:
        """A model that does not stop after its JSON object."""
        return cls(content=content, ramble=ramble, ignores_max_tokens=ignores_max_tokens)

    @classmethod
    def forever(cls, content: str = '{"answer": "', token_delay: float = 0.005) -> LLMReply:
        """A server that ignores max_tokens and streams words until the client leaves (a JSON string never
        closed)."""
        return cls(content=content, endless=True, ignores_max_tokens=True, token_delay=token_delay)

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
        """A reply whose first byte comes after `seconds` (a long prompt, a busy server)."""
        return cls(content=content, delay=seconds)

    @classmethod
    def trickle(cls, content: str, token_delay: float) -> LLMReply:
        """A reply streamed one token every `token_delay` seconds (a slow model)."""
        return cls(content=content, token_delay=token_delay)

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
    claims = [
        {"text": (first_sentence(texts.get(i, "")) or f"Evidence {i} is relevant") + ".", "citations": [i]} for i in ids
    ]
    return json.dumps(
        {
            "answer": " ".join(c["text"] for c in claims) or "The evidence does not say.",
            "claims": claims,
            "citations": ids,
            "confidence": 0.8,
            "reasoning_summary": "Each claim restates one evidence item.",
        }
    )


def step_of(request_json: dict[str, Any]) -> str:
    """Which of Flux's tasks a request is: the `flux_<step>` name of its json_schema or, in a weaker JSON mode, the
    task its system prompt opens with ("answer" when none matches)."""
    fmt = request_json.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return str((fmt.get("json_schema") or {}).get("name", "")).removeprefix("flux_")
    system = str(((request_json.get("messages") or [{}])[0]).get("content", ""))
    for step, opening in _STEP_OPENINGS:
        if system.startswith(opening):
            return step
    return "answer"


_STEP_OPENINGS = (
    ("screen", "You screen questions"),
    ("judge", "You judge whether"),
    ("plan", "You read a question"),
    ("rewrite", "Rewrite the question"),
    ("rewrite", "Split the question"),
    ("rewrite", "Reduce the question"),
)


def stepwise_responder(answer: Responder = citing_responder) -> Responder:
    """A well-behaved model for every task: the screen allows, the judge finds the evidence good, a rewrite
    repeats the question, a plan reads it as a literature search, and `answer` answers."""

    def respond(request_json: dict[str, Any]) -> str:
        step = step_of(request_json)
        if step == "screen":
            return json.dumps({"allowed": True, "reason": ""})
        if step == "judge":
            return json.dumps(
                {"verdict": "good", "confidence": 0.8, "missing": [], "rationale": "The evidence states what is asked."}
            )
        if step == "rewrite":
            question = prompt_of(request_json).rsplit("Question: ", 1)[-1].strip()
            return json.dumps({"queries": [question, question]})
        if step == "plan":
            return SEARCH_PLAN
        return answer(request_json)

    return respond


def completion(
    content: str, model: str, serial: int, finish_reason: str = "stop", usage: tuple[int, int] = (0, 0)
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def tokens_of(text: str) -> list[str]:
    """The scripted model's tokens: each whitespace-led word (and a trailing run of whitespace)."""
    return re.findall(r"\s*\S+|\s+$", text)


def _chunk(
    serial: int,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
) -> bytes:
    body: dict[str, Any] = {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class LLMServer(ScriptedServer):
    request_type = ChatRequest
    requests: list[ChatRequest]  # request_type makes every record a ChatRequest

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        models: tuple[str, ...] | None = None,
        json_modes: tuple[str, ...] = ("text", "json_object", "json_schema"),
    ) -> None:
        """`models`: the model ids the server has (None: any id is served); `json_modes`: the response_format
        types it accepts (others get OpenAI's 400 naming response_format)."""
        super().__init__()
        self.responder = responder
        self.models = models
        self.json_modes = json_modes
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
    def chats(self) -> list[dict[str, Any]]:
        """The bodies of the chat completion requests, in order."""
        return [r.json or {} for r in self.requests if r.path == CHAT_PATH]

    @property
    def authorizations(self) -> list[str | None]:
        return [r.authorization for r in self.requests]

    def script(self, *replies: LLMReply | str) -> None:
        """Queue replies, consumed one per request; a plain string is the assistant's message content."""
        with self._lock:
            self._script.extend(LLMReply.text(r) if isinstance(r, str) else r for r in replies)

    def script_plans(self, *replies: LLMReply | str) -> None:
        """Queue replies to plan requests; without any, a plan request gets the responder's reply, else a plan that
        leaves the question to the literature (`SEARCH_PLAN`)."""
        with self._lock:
            self._plans.extend(LLMReply.text(r) if isinstance(r, str) else r for r in replies)

    def reply_to(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path == MODELS_PATH:
            listed = self.models or ("scripted",)
            return Reply.json(
                json.dumps(
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in listed],
                    }
                )
            )
        if request.method != "POST" or request.path != CHAT_PATH:
            return Reply.error(404, body=f"no route {request.method} {request.path}")
        body = request.json if isinstance(request.json, dict) else {}
        if problem := self._request_problem(body):
            return problem
        reply = self._next_reply(body)
        if reply.raw is not None:
            return replace(reply.raw, delay=reply.delay) if reply.delay else reply.raw
        return self._completion(body, reply)

    def _request_problem(self, body: dict[str, Any]) -> Reply | None:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return invalid_request("you must provide a model parameter", "model")
        if self.models is not None and model not in self.models:
            return error_reply(
                404, f"The model `{model}` does not exist or you do not have access to it.", None, "model_not_found"
            )
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return invalid_request("'messages' must be a non-empty array", "messages")
        max_tokens = body.get("max_tokens")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
        ):
            return invalid_request(
                f"Invalid 'max_tokens': integer below minimum value (got {max_tokens!r})", "max_tokens"
            )
        if body.get("stream_options") is not None and body.get("stream") is not True:
            return invalid_request(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
            )
        fmt = body.get("response_format")
        problem = response_format_problem(fmt)
        if not problem and isinstance(fmt, dict) and fmt.get("type") not in self.json_modes:
            problem = f"Invalid value for 'response_format.type': {fmt.get('type')!r} is not supported"
        return invalid_request(problem, "response_format") if problem else None

    def _completion(self, body: dict[str, Any], reply: LLMReply) -> Reply:
        model, serial = str(body["model"]), next(self._serials)
        tokens = tokens_of((reply.content or "") + reply.ramble)
        cap = body.get("max_tokens")
        finish = "stop"
        if cap is not None and len(tokens) > cap and not reply.ignores_max_tokens:
            tokens, finish = tokens[:cap], "length"
        usage = (len(prompt_of(body).split()), len(tokens))
        if body.get("stream") is not True:
            text = json.dumps(completion("".join(tokens), model, serial, finish, usage))
            return replace(Reply.json(text), delay=reply.delay)
        events = [_chunk(serial, model, {"role": "assistant", "content": ""})]
        events += [_chunk(serial, model, {"content": token}) for token in tokens]
        endless = _chunk(serial, model, {"content": " more"}) if reply.endless else None
        events.append(_chunk(serial, model, {}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(_chunk(serial, model, {}, usage=usage))
        events.append(b"data: [DONE]\n\n")
        if endless is not None:  # never finishes: the content, then words until the client leaves
            events = events[: 1 + len(tokens)]
        return Reply(
            200,
            b"",
            {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            delay=reply.delay,
            events=tuple(events),
            event_delay=reply.token_delay,
            endless=endless,
        )

    def _next_reply(self, request_json: dict[str, Any]) -> LLMReply:
        if is_plan_request(request_json):
            with self._lock:
                if self._plans:
                    return self._plans.popleft()
            if self.responder is not None:
                return LLMReply.text(self.responder(request_json))
            return LLMReply.text(SEARCH_PLAN)
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return LLMReply.text(self.responder(request_json))
        # 418 is never retried, so a test that under-scripts fails at once instead of backing off.
        return LLMReply.error(418, body="llm_server: script exhausted and no responder")


_SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# A plan that reads the question as a literature search, naming nothing: what a model says of a question it has no
# typed reading for.
SEARCH_PLAN = json.dumps(
    {
        "operation": "search",
        "relation": None,
        "subjects": [],
        "objects": [],
        "returns": None,
        "depth": None,
        "source": "",
        "field": None,
        "scope": None,
    }
)


def is_plan_request(request_json: dict[str, Any] | None) -> bool:
    """A request for Flux's plan: its schema is named flux_plan, or (in a weaker JSON mode) its instructions are
    the plan prompt's."""
    fmt = (request_json or {}).get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("name") == "flux_plan"
    messages = (request_json or {}).get("messages") or [{}]
    return str(messages[0].get("content", "")).startswith("You read a question about biological pathways")


def error_reply(
    status: int, message: str, param: str | None, code: str | None, kind: str = "invalid_request_error"
) -> Reply:
    """OpenAI's error body (`{"error": {"message", "type", "param", "code"}}`)."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json"})


def invalid_request(message: str, param: str) -> Reply:
    """OpenAI's 400 for a request it will not run."""
    return error_reply(400, message, param, None)


def context_length_exceeded(limit: int = 2048, asked: int = 3100) -> LLMReply:
    """OpenAI's 400 for a prompt longer than the model's context (code `context_length_exceeded`)."""
    return LLMReply(
        raw=error_reply(
            400,
            f"This model's maximum context length is {limit} tokens. However, your "
            f"messages resulted in {asked} tokens. Please reduce the length of the "
            "messages.",
            "messages",
            "context_length_exceeded",
        )
    )


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
            return (
                f"Invalid schema for response_format: In context={where}, 'additionalProperties' is required to "
                "be supplied and to be false"
            )
        if sorted(schema.get("required", [])) != sorted(properties):
            return (
                f"Invalid schema for response_format: In context={where}, 'required' is required to be supplied "
                "and to be an array including every key in properties"
            )
        for name, child in properties.items():
            if problem := _strict_problem(child, f"{where}.properties.{name}"):
                return problem
    if isinstance(schema.get("items"), dict) and (problem := _strict_problem(schema["items"], f"{where}.items")):
        return problem
    for n, branch in enumerate(schema.get("anyOf", [])):
        if problem := _strict_problem(branch, f"{where}.anyOf.{n}"):
            return problem
    return ""
