"""What each fixture's set-up cost, in pytest's own reports: a test's report carries, in its `user_properties`, the
fixtures set up for it and the seconds each took without the fixtures it requested (the stack's start-up is not
counted again in the demo platform's). `--report-log` writes them with every report; benchmarks/suite_time.py reads
them. Loaded by tests/conftest.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

FIXTURE_SETUP = "fixture_setup"
TRIVIAL_S = 0.01  # below this a fixture is not recorded: most are a dict or a path

_current: list[pytest.Item] = []  # the test being run (set-up, call, teardown)
_open: list[float] = []  # per fixture being set up: the seconds its own requested fixtures took


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _current.append(item)
    try:
        yield
    finally:
        _current.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Iterator[None]:
    started = time.perf_counter()
    _open.append(0.0)
    try:
        yield
    finally:
        took = time.perf_counter() - started
        inner = _open.pop()
        if _open:
            _open[-1] += took
        own = took - inner
        if _current and own >= TRIVIAL_S:
            record = {"fixture": fixturedef.argname, "scope": fixturedef.scope, "seconds": round(own, 3)}
            _current[-1].user_properties.append((FIXTURE_SETUP, record))
