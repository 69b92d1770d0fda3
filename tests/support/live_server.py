"""A real uvicorn server for an ASGI app, on a free 127.0.0.1 port, in a thread of the test process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from tests.support.ports import free_port


@contextmanager
def live_server(app: FastAPI, start_timeout: float = 120.0, log_level: str = "warning") -> Iterator[str]:
    """Serve `app` until the block ends; yields its base URL. The lifespan (the pipeline warm-up) runs first.
    `log_level="info"` keeps uvicorn's access log on, as `flux serve` has it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server on port {port} did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
