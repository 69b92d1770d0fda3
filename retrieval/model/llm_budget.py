"""One question's LLM budget: the deadline every LLM call of the question shares, and the record of each call
(tokens in and out, latency, outcome) that the answer, the MLflow query run and /metrics report.

The pipeline opens a budget per question (`with budget.active(): …`); the OpenAI-compatible provider finds the open
one with `current()`. It is a context variable, not a parameter, because the deadline belongs to the question while
one provider object serves every concurrent question: each question runs in a thread of its own (FastAPI's worker,
the SSE worker, the CLI), and a context variable set in a thread is seen by that thread only.

An auxiliary step (screen, plan, rewrite, judge) may use what remains less `answer_reserve`, so a slow judge cannot
leave the answer itself no time; the answer step may use all that remains.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

LLMStep = Literal["screen", "plan", "rewrite", "judge", "answer", "check"]
# ok: a complete reply; cut: Flux closed the stream itself (the JSON object was complete, or the token cap was
# reached by a server that ignores max_tokens); the others are failures the offline provider stands in for.
LLMOutcome = Literal[
    "ok", "cut", "timeout", "deadline", "busy", "refused", "rejected", "malformed", "unreachable", "error"
]
GOOD_OUTCOMES: frozenset[str] = frozenset({"ok", "cut"})


class LLMCall(BaseModel):
    """One chat completion as Flux sent it (all its attempts)."""

    step: LLMStep
    outcome: LLMOutcome
    ms: float = Field(ge=0.0, description="From the request's start to its end or abandonment, queueing included.")
    queued_ms: float = Field(default=0.0, ge=0.0, description="Waiting for a free slot at the endpoint.")
    tokens_in: int | None = Field(default=None, description="Prompt tokens, as the server reported them.")
    tokens_out: int | None = Field(
        default=None, description="Completion tokens (reported, or counted from the stream when `tokens_estimated`)."
    )
    tokens_estimated: bool = False
    max_tokens: int | None = None
    attempts: int = Field(default=1, ge=0)
    json_mode: str = Field(default="", description="json_schema, json_object or prompt (JSON asked in words only).")
    detail: str = Field(default="", description="Why it failed or was cut, in words.")

    @property
    def failed(self) -> bool:
        return self.outcome not in GOOD_OUTCOMES


class BudgetSpent(RuntimeError):
    """No time is left in the question's budget for this step."""


@dataclass
class QuestionBudget:
    seconds: float
    answer_reserve: float = 0.0
    clock: Callable[[], float] = time.monotonic
    calls: list[LLMCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the answer should say about the endpoint (its JSON mode)
    # The question's event sink: `llm_wait` when a call queues for the endpoint, `llm_call` when one ends (SSE;
    # the LLM step is `llm_step` in both).
    emit: Callable[[str, dict[str, Any]], None] = lambda _name, _payload: None
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.deadline - self.clock())

    def allowance(self, step: LLMStep) -> float:
        """Seconds this step's call may take (0: none left for it)."""
        reserve = 0.0 if step in ("answer", "check") else min(self.answer_reserve, self.seconds / 2)
        return max(0.0, self.remaining() - reserve)

    def record(self, call: LLMCall) -> None:
        self.calls.append(call)
        self._emit(call)

    def reject_latest(self, why: str) -> None:
        """The latest call's reply was turned down after the call ended: recorded, and said on the stream again
        (`amends`: the index of the call it replaces), so the stream ends as the answer's `llm_calls` do."""
        call = self.calls[-1]
        call.outcome, call.detail = "rejected", why
        self._emit(call, amends=len(self.calls) - 1)

    def _emit(self, call: LLMCall, amends: int | None = None) -> None:
        payload = call.model_dump()
        payload["llm_step"] = payload.pop("step")  # an event's own `step` is its name ("llm_call") on the stream
        if amends is not None:
            payload["amends"] = amends
        self.emit("llm_call", payload)

    @property
    def fell_back(self) -> list[LLMCall]:
        return [c for c in self.calls if c.failed]

    def slowest(self) -> LLMCall | None:
        return max(self.calls, key=lambda c: c.ms, default=None)

    def warnings(self) -> list[str]:
        """One sentence per failed call, naming the step, why, and (when time ran out) the slowest step."""
        out = []
        for call in self.fell_back:
            stood_in = "the offline answer stands in" if call.step == "answer" else "the offline rules stand in"
            text = f"LLM {call.step} step {_OUTCOME_WORDS[call.outcome]}"
            if call.detail:
                text += f" ({call.detail})"
            if call.outcome in ("deadline", "busy", "timeout"):
                slowest = self.slowest()
                if slowest is not None and slowest is not call and slowest.ms > 0:
                    text += f"; slowest step: {slowest.step}, {slowest.ms / 1000:.1f} s"
            out.append(f"{text}; {stood_in}")
        return list(dict.fromkeys(self.notes + out))

    def timings(self) -> dict[str, float]:
        """Milliseconds per step (`llm_<step>`), summed over that step's calls: the answer's timings carry them."""
        ms: dict[str, float] = {}
        for call in self.calls:
            ms[f"llm_{call.step}"] = round(ms.get(f"llm_{call.step}", 0.0) + call.ms, 2)
        return ms

    @contextmanager
    def active(self) -> Iterator[QuestionBudget]:
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_OUTCOME_WORDS: dict[str, str] = {
    "timeout": "timed out",
    "deadline": "ran out of the question's time budget",
    "busy": "waited for a free slot at the endpoint (other questions, or an abandoned request still running there) "
    "until the budget ran out",
    "refused": "was refused by the server",
    "rejected": "gave a reply Flux could not use",
    "malformed": "got a reply that is not a chat completion",
    "unreachable": "could not reach the server",
    "error": "failed",
}
_CURRENT: ContextVar[QuestionBudget | None] = ContextVar("flux_question_budget", default=None)


def current() -> QuestionBudget | None:
    """The budget of the question this thread is answering (None outside one: its calls are bounded by the
    per-call timeout alone and recorded nowhere)."""
    return _CURRENT.get()


def mark_rejected(why: str) -> bool:
    """Record that the question's latest LLM call gave a reply that could not be used (a reply the provider, the
    plan check or the answer validation turned down); True when it is recorded (its warning comes from here)."""
    budget = current()
    if budget is None or not budget.calls:
        return False
    if not budget.calls[-1].failed:
        budget.reject_latest(why)
    return True


def failed(step: LLMStep) -> bool:
    """Whether a call of this step failed in the current question (its warning is the record's)."""
    budget = current()
    return budget is not None and any(c.step == step and c.failed for c in budget.calls)
