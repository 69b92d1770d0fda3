"""The OpenAPI document and its two viewers (/docs, /redoc), behind the API key like every endpoint but /health.

FastAPI's own copies of these routes are plain Starlette routes that no dependency reaches, so the app is created
without them (`openapi_url=None`, …) and they are served here instead, with FastAPI's own HTML."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, JSONResponse

from serving.dependencies import require_api_key

OPENAPI_PATH = "/openapi.json"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"
VIEW_METHODS = ["GET", "HEAD"]  # what FastAPI's Starlette routes answered
docs_router = APIRouter(include_in_schema=False, dependencies=[Depends(require_api_key)])


def _root_path(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


@docs_router.api_route(OPENAPI_PATH, methods=VIEW_METHODS)
async def openapi_document(request: Request) -> JSONResponse:
    schema = request.app.openapi()
    root_path = _root_path(request)
    if (
        root_path
        and request.app.root_path_in_servers
        and root_path not in {s.get("url") for s in schema.get("servers", [])}
    ):  # behind a proxy's prefix, as FastAPI does
        schema = {**schema, "servers": [{"url": root_path}, *schema.get("servers", [])]}
    return JSONResponse(schema)


@docs_router.api_route("/docs", methods=VIEW_METHODS)
async def swagger_ui(request: Request) -> HTMLResponse:
    root_path = _root_path(request)
    return get_swagger_ui_html(
        openapi_url=root_path + OPENAPI_PATH,
        title=f"{request.app.title} - Swagger UI",
        oauth2_redirect_url=root_path + OAUTH2_REDIRECT_PATH,
    )


@docs_router.api_route(OAUTH2_REDIRECT_PATH, methods=VIEW_METHODS)
async def swagger_ui_oauth2_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@docs_router.api_route("/redoc", methods=VIEW_METHODS)
async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(openapi_url=_root_path(request) + OPENAPI_PATH, title=f"{request.app.title} - ReDoc")
