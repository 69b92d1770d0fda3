"""What the rest of the pytest session will need."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest


def demo_read_later(request: pytest.FixtureRequest) -> bool:
    """Whether a test after this one in the session uses the demo platform (and so needs it as built)."""
    items = request.session.items
    later = items[items.index(request.node) + 1 :] if request.node in items else items
    return any("demo_platform" in _fixtures(item) for item in later)


def changes_demo_last(items: list[Any]) -> None:
    """Move the tests marked `changes_demo` after all others, in place; the order is otherwise kept."""
    items.sort(key=lambda item: item.get_closest_marker("changes_demo") is not None)


def _fixtures(item: Any) -> Sequence[str]:
    return getattr(item, "fixturenames", ())


def once_per_session(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], Any]) -> Any:
    """`compute()` (JSON-serialisable) run once in a pytest session: under pytest-xdist the first worker to ask runs it
    and the others read its result (a module's tests may be split between workers, and each would set up its module
    fixtures again). Without xdist it is simply called."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    shared = tmp_path_factory.getbasetemp().parent  # one folder per session, shared by its workers
    result = shared / f"{name}.json"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.is_file():
            result.write_text(json.dumps(compute()))
        return json.loads(result.read_text())
