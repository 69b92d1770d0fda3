"""The one rate limiter (dagster_project/core/rate_limit.py): GCRA on a store. Outgoing calls book slots and wait;
incoming requests take a free slot or learn how long until one is free. The Redis store is exercised over a real
Redis in tests/integration/test_api_security.py."""

from __future__ import annotations

import pytest

from dagster_project.core.rate_limit import LocalStore, RateLimiter
from tests.support.clock import ManualClock


def test_a_burst_of_n_is_allowed_then_one_slot_per_interval_with_the_wait_until_it() -> None:
    clock = ManualClock()
    limiter = RateLimiter(2 / 60, burst=2, store=LocalStore(clock))  # 2 a minute, both at once
    assert limiter.try_acquire("k") is None and limiter.try_acquire("k") is None
    assert limiter.try_acquire("k") == pytest.approx(30.0)
    clock.advance(29.0)
    assert limiter.try_acquire("k") == pytest.approx(1.0)  # a refused request books nothing
    clock.advance(1.0)
    assert limiter.try_acquire("k") is None
    assert limiter.try_acquire("k") == pytest.approx(30.0)


def test_keys_have_their_own_buckets_and_an_idle_key_refills_only_up_to_the_burst() -> None:
    clock = ManualClock()
    limiter = RateLimiter(1.0, burst=3, store=LocalStore(clock))
    for _ in range(3):
        assert limiter.try_acquire("a") is None
    assert limiter.try_acquire("a") is not None and limiter.try_acquire("b") is None
    clock.advance(3600)
    assert [limiter.try_acquire("a") for _ in range(4)][:3] == [None, None, None]
    assert limiter.try_acquire("a") is not None


def test_acquire_books_consecutive_slots_and_sleeps_until_each() -> None:
    clock, sleeps = ManualClock(), []
    limiter = RateLimiter(4.0, store=LocalStore(clock), sleep=sleeps.append)
    for _ in range(4):
        limiter.acquire()
    assert sleeps == pytest.approx([0.25, 0.5, 0.75])  # the first goes at once; the others are booked in turn


def test_no_limit_when_the_rate_is_zero() -> None:
    limiter = RateLimiter(0, sleep=lambda s: pytest.fail(f"slept {s}"))
    assert limiter.interval == 0.0 and limiter.try_acquire("k") is None
    limiter.acquire()
