"""One MLflow run per query, logged off the request path by a background thread (a slow or dead tracking store
never slows or fails a query). Questions are logged only as a hash and as text with e-mail addresses redacted."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import TYPE_CHECKING

from dagster_project.core.settings import FluxSettings
from retrieval.model.answer import FinalAnswer
from retrieval.pipeline import question_hash
from retrieval.question.guardrails import redact_emails

if TYPE_CHECKING:  # mlflow loads on the first logged answer, not at import
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)
VERDICT_CODE = {"good": 2.0, "partial": 1.0, "bad": 0.0, "unjudged": -1.0}


def run_payload(answer: FinalAnswer, endpoint: str) -> tuple[dict[str, str], dict[str, float], dict[str, str]]:
    """(params, metrics, tags) of one query run."""
    params = {
        "question_hash": question_hash(answer.question),
        "mode": answer.mode,
        "route": answer.route,
        "dataset_version": answer.dataset_version[:500],
        "pipeline_version": answer.pipeline_version,
        "index_version": answer.index_version,
        "dagster_run_id": answer.dagster_run_id,
        "provider": answer.provider,
        "reranker": answer.reranker,
        "cached": str(answer.cached or "no"),
        "endpoint": endpoint,
    }
    kinds = [c.kind for c in answer.citations]
    metrics = {f"latency_{stage}_ms": ms for stage, ms in answer.timings_ms.items()}
    metrics |= {
        "attempts": float(answer.attempts),
        "confidence": answer.confidence,
        "verdict_code": VERDICT_CODE[answer.retrieval_quality],
        "claims": float(len(answer.claims)),
        "citations": float(len(answer.citations)),
        "chunk_citations": float(kinds.count("chunk")),
        "graph_citations": float(kinds.count("graph")),
        "warnings": float(len(answer.warnings)),
        "refused": float(answer.refused),
    }
    calls = answer.llm_calls
    metrics |= {
        "llm_calls": float(len(calls)),
        "llm_failed_calls": float(sum(c.failed for c in calls)),
        "llm_tokens_in": float(sum(c.tokens_in or 0 for c in calls)),
        "llm_tokens_out": float(sum(c.tokens_out or 0 for c in calls)),
        "llm_queued_ms": float(sum(c.queued_ms for c in calls)),
    }
    tags = {
        "flux.kind": "query",
        "verdict": answer.retrieval_quality,
        "question": redact_emails(answer.question)[:1000],
    }
    if calls:  # "screen:ok plan:ok judge:deadline answer:deadline"
        tags["llm_outcomes"] = " ".join(f"{c.step}:{c.outcome}" for c in calls)[:5000]
    return params, metrics, tags


def llm_call_history(answer: FinalAnswer, now_ms: int) -> list[tuple[str, float, int, int]]:
    """Each LLM call as metric steps (name, value, timestamp, step = the call's position): MLflow charts them per
    call."""
    rows = []
    for n, call in enumerate(answer.llm_calls):
        rows += [("llm_call_ms", call.ms, now_ms, n), ("llm_call_queued_ms", call.queued_ms, now_ms, n)]
        if call.tokens_in is not None:
            rows.append(("llm_call_tokens_in", float(call.tokens_in), now_ms, n))
        if call.tokens_out is not None:
            rows.append(("llm_call_tokens_out", float(call.tokens_out), now_ms, n))
    return rows


class QueryLogger:
    """Queue + one worker thread. `flush()` waits until everything queued so far is logged (tests, CLI)."""

    def __init__(self, settings: FluxSettings, enabled: bool | None = None) -> None:
        self.settings = settings
        self.enabled = settings.serving.log_queries_to_mlflow if enabled is None else enabled
        self.experiment = f"{settings.ops.mlflow_experiment}-queries"
        self._queue: queue.Queue[tuple[FinalAnswer, str] | None] = queue.Queue(maxsize=10_000)
        self._thread: threading.Thread | None = None
        self._client: MlflowClient | None = None
        self._experiment_id: str | None = None
        self.logged = 0
        self.failed = 0
        self.last_run_id: str | None = None

    def submit(self, answer: FinalAnswer, endpoint: str) -> None:
        if not self.enabled:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="flux-mlflow", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait((answer, endpoint))
        except queue.Full:
            self.failed += 1
            log.warning("MLflow query log queue is full; dropping one query run")

    def flush(self, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.05)
        return not self._queue.unfinished_tasks

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._log(*item)
                self.logged += 1
            except Exception as exc:  # a tracking-store failure must not kill the worker
                self.failed += 1
                log.warning("MLflow query run not logged: %s", redact_emails(str(exc).splitlines()[0][:300]))
            finally:
                self._queue.task_done()

    def _log(self, answer: FinalAnswer, endpoint: str) -> None:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient

        from dagster_project.core.experiments import configure_mlflow

        if self._client is None:
            uri = self.settings.resolved_mlflow_tracking_uri
            self._experiment_id = configure_mlflow(uri, self.experiment, self.settings.home / "mlflow" / "artifacts")
            self._client = MlflowClient(uri)
        params, metrics, tags = run_payload(answer, endpoint)
        run = self._client.create_run(self._experiment_id, run_name=f"query-{params['question_hash']}", tags=tags)
        now = int(time.time() * 1000)
        history = [Metric(k, v, t, n) for k, v, t, n in llm_call_history(answer, now)]
        self._client.log_batch(
            run.info.run_id,
            metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()] + history,
            params=[Param(k, v) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        self._client.set_terminated(run.info.run_id)
        self.last_run_id = run.info.run_id
