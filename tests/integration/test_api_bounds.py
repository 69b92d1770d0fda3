"""No request can slow the API for others or grow what it keeps: a 60 KB URL path (every access-log record passes
the e-mail redaction, on the event loop) and hundreds of distinct unknown paths (each would be a metrics series if
requests were labelled by URL). A real uvicorn server with its access log on, as `flux serve` runs it."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

from dagster_project.core.settings import FluxSettings
from serving.api import create_app
from tests.support.live_server import live_server

LONG_PATH = "/" + "a" * 60_000  # no address in it: the worst case for a pattern that backtracks over local parts
# Bounds with room for a loaded CI machine; before the linear redaction one such request took 5 s and four of them
# held /health for 20 s.
HEALTH_WHILE_LOADED_S = 2.0
METRICS_GROWTH_BYTES = 4_000


def _get(url: str, timeout: float = 60.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_long_paths_do_not_hold_health_and_unknown_paths_do_not_grow_metrics(demo_platform: FluxSettings) -> None:
    app = create_app(demo_platform.evolve(log_queries_to_mlflow=False, cache_enabled=False))
    with live_server(app, log_level="info") as base:
        assert _get(f"{base}/health")[0] == 200
        statuses: list[int] = []
        senders = [threading.Thread(target=lambda: statuses.append(_get(base + LONG_PATH)[0])) for _ in range(4)]
        for sender in senders:
            sender.start()
        started = time.monotonic()
        health = _get(f"{base}/health")[0]
        health_seconds = time.monotonic() - started
        for sender in senders:
            sender.join(timeout=120)
        assert health == 200 and health_seconds < HEALTH_WHILE_LOADED_S, health_seconds
        assert statuses == [404] * 4

        before = len(_get(f"{base}/metrics")[1])
        for n in range(300):
            assert _get(f"{base}/probe/{n}/wp-login.php")[0] == 404
            assert _get(f"{base}/answers/no-such-answer-{n}")[0] == 404
        after = _get(f"{base}/metrics")[1].decode()
        assert len(after) - before < METRICS_GROWTH_BYTES, len(after) - before
        assert "probe/" not in after and "no-such-answer" not in after
