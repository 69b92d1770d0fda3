"""`flux llm check`: what the configured OpenAI-compatible server is, before a question finds out.

It lists the server's models (`GET /models`) and looks for the context length where servers publish it (vLLM's
`max_model_len`, llama.cpp's `meta.n_ctx_train` and `/props`, Ollama's `/api/show`, a `context_length` or
`context_window` field elsewhere), then sends one timed probe through the same transport questions use — a screen
request, JSON mode detection included — and reports its latency, tokens and the JSON mode the server accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from dagster_project.core.settings import FluxSettings
from retrieval.answering.llm import OpenAICompatibleProvider
from retrieval.model.llm_budget import LLMCall, QuestionBudget

PROBE_QUESTION = "Which genes take part in glycolysis?"
# Characters per token of English prose, and the instructions' share of a prompt: enough to say "too small".
CHARS_PER_TOKEN = 4
PROMPT_OVERHEAD_TOKENS = 600
_CONTEXT_FIELDS = ("max_model_len", "context_length", "context_window", "n_ctx", "n_ctx_train")


@dataclass
class LLMCheck:
    base_url: str
    model: str
    models: list[str] | None = None  # None: the server did not list them
    context_length: int | None = None
    context_source: str = ""
    probe: LLMCall | None = None
    problems: list[str] = field(default_factory=list)  # the server cannot answer questions as configured
    notes: list[str] = field(default_factory=list)  # it can, but something deserves a look

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def tokens_per_second(self) -> float | None:
        call = self.probe
        if call is None or not call.tokens_out or call.ms <= call.queued_ms:
            return None
        return round(call.tokens_out / ((call.ms - call.queued_ms) / 1000), 1)


def check_llm(settings: FluxSettings) -> LLMCheck:
    provider = OpenAICompatibleProvider.from_settings(settings)  # FluxConfigError when no URL is set
    llm = settings.llm
    result = LLMCheck(provider.base_url, llm.llm_model)
    key = llm.llm_api_key.get_secret_value() if llm.llm_api_key else None
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(headers=headers, timeout=min(10.0, llm.llm_timeout), follow_redirects=False) as client:
        _list_models(client, result)
        if result.context_length is None:
            _find_context(client, result)
    with provider:
        budget = QuestionBudget(llm.llm_question_budget)
        with budget.active():
            provider.screen(PROBE_QUESTION)
        result.probe = budget.calls[-1] if budget.calls else None
        result.notes += budget.notes
    _judge(result, settings)
    return result


def _list_models(client: httpx.Client, result: LLMCheck) -> None:
    try:
        response = client.get(f"{result.base_url}/models")
    except httpx.HTTPError as exc:
        result.problems.append(f"the server does not answer at {result.base_url}: {type(exc).__name__}: {exc}")
        return
    if response.status_code != 200:
        result.notes.append(f"GET /models answered HTTP {response.status_code}; the model list is unknown")
        return
    try:
        entries = [e for e in response.json().get("data", []) if isinstance(e, dict)]
    except (ValueError, AttributeError):
        result.notes.append("GET /models did not answer a model list")
        return
    result.models = [str(e.get("id")) for e in entries]
    mine = next((e for e in entries if e.get("id") == result.model), None)
    if mine is not None and (length := _context_in(mine)) is not None:
        result.context_length, result.context_source = length, "GET /models"


def _context_in(entry: dict[str, Any]) -> int | None:
    for where in (entry, entry.get("meta") or {}):
        for name in _CONTEXT_FIELDS:
            if isinstance(where.get(name), int) and where[name] > 0:
                return int(where[name])
    return None


def _find_context(client: httpx.Client, result: LLMCheck) -> None:
    """llama.cpp's `/props` (its default slot's n_ctx) and Ollama's `/api/show`, at the server root."""
    root = result.base_url.removesuffix("/v1")
    probes: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", f"{root}/props", None),
        ("POST", f"{root}/api/show", {"model": result.model}),
    ]
    for method, url, body in probes:
        try:
            response = client.request(method, url, json=body)
            payload = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            continue
        if not isinstance(payload, dict):
            continue
        settings = payload.get("default_generation_settings") or {}
        info = payload.get("model_info") or {}
        length = settings.get("n_ctx") or next((v for k, v in info.items() if k.endswith(".context_length")), None)
        if isinstance(length, int) and length > 0:
            result.context_length, result.context_source = length, url.removeprefix(root)
            return


def _judge(result: LLMCheck, settings: FluxSettings) -> None:
    if result.models is not None and result.model not in result.models:
        # Single-model servers (llama.cpp, llama-cpp-python) answer whatever name is asked for; others do not.
        result.notes.append(
            f"FLUX_LLM_MODEL={result.model} is not among the server's models ({', '.join(result.models[:8]) or 'none'})"
        )
    call = result.probe
    if call is not None and call.failed:
        result.problems.append(f"the probe failed: {call.outcome}: {call.detail}")
    if call is not None and call.json_mode == "prompt":
        result.notes.append("the server accepts no JSON response_format: replies are checked, not constrained")
    needed = (
        settings.retrieval.context_budget_chars // CHARS_PER_TOKEN
        + PROMPT_OVERHEAD_TOKENS
        + settings.llm.llm_max_tokens_answer
    )
    if result.context_length is not None and result.context_length < needed:
        result.problems.append(
            f"the model's context ({result.context_length} tokens) is smaller than an answer prompt needs (~{needed}: "
            f"FLUX_CONTEXT_BUDGET_CHARS={settings.retrieval.context_budget_chars} of evidence, the instructions and "
            f"FLUX_LLM_MAX_TOKENS_ANSWER={settings.llm.llm_max_tokens_answer}); lower FLUX_CONTEXT_BUDGET_CHARS"
        )
