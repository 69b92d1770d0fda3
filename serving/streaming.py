"""The events of POST /query/stream. FastAPI frames them (`EventSourceResponse`: `event:`/`data:` lines, JSON data,
no-cache headers, keep-alive comments while the pipeline is quiet); this module decides what they are."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from fastapi.sse import ServerSentEvent

from dagster_project.core.settings import FluxConfigError
from retrieval.model.answer import FinalAnswer
from retrieval.pipeline import INTERNAL_EVENTS, EventSink
from serving.health import store_error_message
from serving.metrics import ServiceMetrics
from serving.tracking import QueryLogger

log = logging.getLogger(__name__)


def answer_events(
    ask: Callable[[EventSink], FinalAnswer], metrics: ServiceMetrics, tracker: QueryLogger
) -> Iterator[ServerSentEvent]:
    """`step` per public pipeline step (internal ones, such as the raw generator reply, are never sent), `evidence`,
    then `answer` or `error`, and always `done` last.

    The pipeline runs in a worker thread so that each step is sent as it happens, not when the answer is ready."""
    events: queue.Queue[tuple[str, Any]] = queue.Queue()
    started = time.perf_counter()

    def relay(name: str, payload: dict[str, Any]) -> None:
        if name not in INTERNAL_EVENTS:
            events.put(("step", {"step": name, **payload}))

    def work() -> None:
        try:
            answer = ask(relay)
            metrics.observe_answer(answer)
            tracker.submit(answer, "/query/stream")
            events.put(("answer", answer))
        except Exception as exc:
            message = str(exc) if isinstance(exc, FluxConfigError) else store_error_message(exc)
            if message is None:
                log.exception("streamed query failed")
            events.put(("error", {"detail": message or "internal error; see the service log"}))
        finally:
            events.put(("done", None))

    threading.Thread(target=work, name="flux-sse", daemon=True).start()
    timings: dict[str, float] = {}
    while True:
        kind, payload = events.get()
        if kind == "step" and payload.get("step") == "evidence":
            yield ServerSentEvent(event="evidence", data=payload["evidence"])
        elif kind == "answer":
            answer: FinalAnswer = payload
            timings = answer.timings_ms
            yield ServerSentEvent(event="answer", data=answer)
        elif kind == "done":
            total_ms = round((time.perf_counter() - started) * 1000, 2)
            yield ServerSentEvent(event="done", data={"timings_ms": timings, "total_ms": total_ms})
            return
        else:
            yield ServerSentEvent(event=kind, data=payload)
