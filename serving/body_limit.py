"""FLUX_MAX_REQUEST_BYTES: a request body over the limit is refused with a 413 before any endpoint reads it.

FastAPI has a limit of its own (`FastAPI(max_body_size=…)`, Starlette's RequestBodyLimitMiddleware), but it answers
with a fixed plain-text "Content Too Large", even in place of an exception handler's response, where this service
documents its JSON error body naming the setting. Hence this small ASGI middleware."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestBodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_bytes:
                await self._refuse(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        # No declared length (a chunked body): read it here, never more than one byte over the limit, then hand the
        # endpoint what was read.
        chunks: list[bytes] = []
        size, more_body = 0, True
        while more_body:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more_body = message.get("more_body", False)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
        await self.app(scope, _replaying(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = JSONResponse(
            status_code=413, content={"detail": f"request body over {self.max_bytes} bytes (FLUX_MAX_REQUEST_BYTES)"}
        )
        await response(scope, receive, send)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """The body already read as one message, then the client's own messages (a disconnect, for a stream)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
