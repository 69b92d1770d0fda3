"""CircuitBreaker (dagster_project/core/breaker.py), the one breaker behind GraphGuard and the Redis cache: closed,
open for `retry_after` seconds after a failure, then one half-open probe whose verdict closes or reopens it. Time
is a ManualClock the test moves: nothing sleeps."""

from __future__ import annotations

import pytest

from dagster_project.core.breaker import CircuitBreaker
from tests.support.clock import ManualClock

WINDOW = 15.0


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def breaker(clock: ManualClock) -> CircuitBreaker:
    return CircuitBreaker(WINDOW, clock)


def test_it_starts_closed_and_lets_every_call_through(breaker: CircuitBreaker) -> None:
    assert breaker.state == "closed" and breaker.closed and breaker.error == ""
    assert all(breaker.allow() for _ in range(3))
    assert breaker.record_success() is False  # nothing to close: not a recovery


def test_a_failure_opens_it_and_records_the_message(breaker: CircuitBreaker) -> None:
    assert breaker.record_failure("Neo4j is unavailable: refused") is True  # this one opened it
    assert breaker.state == "open" and not breaker.closed
    assert breaker.error == "Neo4j is unavailable: refused"
    assert not breaker.allow()
    assert breaker.record_failure("later") is False  # already open: not a new opening
    assert breaker.error == "later"


def test_it_stays_open_until_the_window_has_passed(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    opened_at = clock.now
    for offset in (0.0, 5.0, WINDOW - 0.001):
        clock.now = opened_at + offset
        assert not breaker.allow(), offset
    clock.now = opened_at + WINDOW
    assert breaker.state == "half_open"
    assert breaker.allow()  # the probe


def test_one_probe_at_a_time_while_half_open(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    clock.advance(WINDOW)
    assert breaker.allow()
    assert breaker.state == "half_open"
    assert not breaker.allow() and not breaker.allow()  # the others keep their fallback while the probe runs


def test_a_successful_probe_closes_it(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    clock.advance(WINDOW)
    assert breaker.allow()
    assert breaker.record_success() is True  # a recovery: the caller logs "back"
    assert breaker.state == "closed" and breaker.error == ""
    assert breaker.allow() and breaker.allow()


def test_a_failed_probe_reopens_it_for_a_whole_new_window(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    clock.advance(WINDOW + 5.0)
    assert breaker.allow()
    assert breaker.record_failure("still down") is False
    assert breaker.state == "open" and breaker.error == "still down"
    clock.advance(WINDOW - 1.0)
    assert not breaker.allow()  # 2 windows after the first failure, but not one after the probe's
    clock.advance(1.0)
    assert breaker.allow()


def test_a_probe_that_never_reports_frees_its_slot_after_a_window(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    clock.advance(WINDOW)
    assert breaker.allow()  # the probe's caller vanishes without a verdict
    clock.advance(WINDOW - 1.0)
    assert not breaker.allow()
    clock.advance(1.0)
    assert breaker.allow()  # a new probe


def test_release_lets_the_next_caller_probe_at_once(breaker: CircuitBreaker, clock: ManualClock) -> None:
    breaker.record_failure("down")
    clock.advance(WINDOW)
    assert breaker.allow()
    breaker.release()  # the probe hit a bug of its own: no verdict on the service
    assert breaker.state == "half_open" and breaker.error == "down"
    assert breaker.allow()
    breaker.release()
    breaker.record_success()
    breaker.release()  # closed: nothing to release
    assert breaker.state == "closed" and breaker.allow()


def test_a_zero_window_probes_on_every_call_and_a_negative_one_is_refused(clock: ManualClock) -> None:
    breaker = CircuitBreaker(0.0, clock)
    breaker.record_failure("down")
    assert breaker.allow() and breaker.allow()
    with pytest.raises(ValueError, match="retry_after"):
        CircuitBreaker(-1.0, clock)


def test_the_default_clock_is_monotonic_time() -> None:
    breaker = CircuitBreaker(3600.0)
    breaker.record_failure("down")
    assert not breaker.allow()
