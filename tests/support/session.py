"""What the rest of the pytest session will need."""

from __future__ import annotations

from collections.abc import Sequence
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
