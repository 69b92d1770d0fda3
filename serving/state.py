"""What the HTTP service keeps between requests, one object per app (so tests can build several apps)."""

from __future__ import annotations

import threading

from fastapi import FastAPI

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from retrieval.pipeline import Pipeline
from serving.answer_store import AnswerStore
from serving.metrics import ServiceMetrics
from serving.security import ApiKeyGuard
from serving.tracking import QueryLogger


class ApiState:
    """Settings, the query pipeline (built on first use), request metrics, the MLflow query logger and the API-key
    guard with its rate limits."""

    def __init__(self, settings: FluxSettings, pipeline: Pipeline | None = None) -> None:
        self.settings = settings
        self.metrics = ServiceMetrics()
        self.tracker = QueryLogger(settings)
        self.api_keys = ApiKeyGuard(settings)
        self._pipeline = pipeline
        self._lock = threading.Lock()

    @staticmethod
    def of(app: FastAPI) -> ApiState:
        """The state `create_app` keeps on the app (`app.state.flux`)."""
        state: ApiState = app.state.flux
        return state

    @property
    def built_pipeline(self) -> Pipeline | None:
        """The pipeline if it is built, else None; never builds it (/health and /metrics must not load models)."""
        return self._pipeline

    def pipeline(self) -> Pipeline:
        """Built on first use, so the service starts (and /health answers) even while a store is down."""
        with self._lock:
            if self._pipeline is None:
                self._pipeline = Pipeline.from_settings(self.settings)
            return self._pipeline

    def answer_store(self) -> AnswerStore:
        return AnswerStore(
            engine_for(self.settings.resolved_serving_database_url), self.settings.serving.conversation_retention_days
        )
