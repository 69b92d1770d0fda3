"""The API's documented shapes beyond the happy path: one error body for every 4xx/5xx, and the real media types
of the streaming and metrics endpoints, so the OpenAPI document is what the service does."""

from __future__ import annotations

from typing import Any

from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field


class ErrorBody(BaseModel):
    detail: str = Field(description="What went wrong, in one line for a person.")
    errors: list[dict[str, Any]] | None = Field(
        default=None,
        description="422 only: one entry per invalid field (loc, msg, type); the request body is never echoed.",
    )


_DESCRIPTIONS = {
    400: "The body is not JSON",
    401: "No or unknown API key (when FLUX_API_KEYS is set)",
    404: "No such answer or conversation",
    413: "Request body over FLUX_MAX_REQUEST_BYTES",
    422: "Invalid request: `detail` says which field and why",
    429: "Rate limit of this API key reached; see Retry-After",
    503: "A required store (Postgres, a published index) is unavailable",
}


def error_responses(*codes: int, route_is_json: bool = True) -> dict[int | str, dict[str, Any]]:
    """Documented error bodies. On a route whose success is not JSON (a stream, Prometheus text) FastAPI would file
    the error schema under that media type, so there the JSON body is referenced explicitly instead."""
    if route_is_json:
        return {code: {"model": ErrorBody, "description": _DESCRIPTIONS[code]} for code in codes}
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    return {code: {"description": _DESCRIPTIONS[code], "content": ref} for code in codes}


# One Server-Sent Event of /query/stream, as clients parse it: the stream's `itemSchema` (merged into FastAPI's generic
# event). Not `schema`: beside an `itemSchema` that describes the whole stream (OpenAPI 3.2), not one event.
SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["step", "evidence", "answer", "error", "done"]},
        "data": {
            "type": "string",
            "description": "JSON: the step, the evidence, the FinalAnswer, the error ({detail}) or {}",
        },
    },
    "required": ["event", "data"],
}


class PrometheusResponse(PlainTextResponse):
    media_type = "text/plain; version=0.0.4"
