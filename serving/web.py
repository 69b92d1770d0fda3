"""The analysts' page: `GET /` and its four static files (serving/web/), on the same service as the API.

The page and its files are open (they hold no data); everything they fetch goes through the API and its keys.
A strict Content-Security-Policy allows only this origin's own script, styles and requests."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

WEB_DIR = Path(__file__).parent / "web"
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

web_router = APIRouter(include_in_schema=False)


@web_router.get("/")
def page() -> FileResponse:
    return FileResponse(WEB_DIR / "index.html", media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def install_page(app: FastAPI) -> None:
    app.include_router(web_router)
    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")
