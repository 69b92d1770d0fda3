"""The HTTP service: a thin FastAPI layer over `retrieval.pipeline.Pipeline`.

POST /query (FinalAnswer; stored, in a conversation), GET /answers/{id} (JSON or ?format=md), GET
/conversations/{id}, POST /query/stream (Server-Sent Events), POST /search (evidence only), GET
/graph/neighbourhood (the graph around an answer's pathways and genes), GET /health (503 when a required store is
down or nothing is published), GET /metrics (Prometheus), and the analysts' page at GET /. Bad requests get a 4xx
with a message; a dead store gets a 503 naming it — never a traceback.

The endpoints live in `serving.routes` and get what they use (settings, pipeline, answer store, the API-key check)
from `serving.dependencies`, so tests can replace any of it with `app.dependency_overrides`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from dagster_project.core.settings import FluxConfigError, FluxSettings, get_settings
from retrieval.pipeline import Pipeline
from retrieval.question.guardrails import install_log_redaction
from serving.body_limit import RequestBodyLimit
from serving.docs import docs_router
from serving.routes import health_router, router
from serving.security import install_cors
from serving.state import ApiState
from serving.web import install_page

log = logging.getLogger(__name__)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = ApiState.of(app)
    # Warm up before accepting requests: the models load now, not on the first question (15-19 s otherwise).
    try:
        await asyncio.to_thread(state.pipeline)
    except FluxConfigError as exc:
        log.error("serving starts without a pipeline: %s", exc)  # /health and every query say why
    yield
    state.tracker.flush(timeout=10)


async def _count_and_time(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    started = time.perf_counter()
    response = await call_next(request)
    metrics = ApiState.of(request.app).metrics
    endpoint = _endpoint(request)
    metrics.requests.labels(endpoint, str(response.status_code)).inc()
    metrics.request_seconds.labels(endpoint).observe(time.perf_counter() - started)
    return response


def _endpoint(request: Request) -> str:
    """The matched route's template (`/answers/{answer_id}`, `/static`), or `unmatched`: never the URL's own path,
    whose every variant (an answer id, a probe for a missing page) would be a series of its own."""
    route = request.scope.get("route")
    return getattr(route, "path_format", None) or getattr(route, "path", None) or "unmatched"


async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """One readable line in `detail` (the documented ErrorBody), the structured errors beside it."""
    errors = jsonable_encoder(exc.errors(), custom_encoder={bytes: lambda b: b.decode("utf-8", "replace")})
    messages = [
        f"{'.'.join(str(p) for p in e.get('loc', []) if p != 'body') or 'body'}: {e.get('msg')}" for e in errors
    ]
    for error in errors:
        error.pop("input", None)  # never echo a (possibly 16 KB) body back
    return JSONResponse(status_code=422, content={"detail": "; ".join(messages), "errors": errors})


def create_app(settings: FluxSettings | None = None, pipeline: Pipeline | None = None) -> FastAPI:
    """The service; `pipeline` is built from `settings` at start-up unless given (tests, benchmarks)."""
    settings = settings or get_settings()
    install_log_redaction()
    app = FastAPI(
        title="Flux",
        version="0.1.0",
        lifespan=_lifespan,
        description="Cited answers over Reactome, KEGG, HGNC/UniProt, OpenAlex and PubMed.",
        # The OpenAPI document and the docs are served by `docs_router`, behind the API key.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.flux = ApiState(settings, pipeline)
    install_cors(app, settings)
    app.add_middleware(RequestBodyLimit, max_bytes=settings.serving.max_request_bytes)
    # Added last, so outermost: 401s, 413s and 429s are counted too.
    app.middleware("http")(_count_and_time)
    # Starlette types a handler for Exception; FastAPI passes this one only RequestValidationErrors.
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.include_router(router)
    app.include_router(health_router)
    app.include_router(docs_router)
    install_page(app)
    return app
