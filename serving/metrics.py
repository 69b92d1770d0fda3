"""Prometheus metrics for the HTTP service (one registry per app, so tests can build several apps)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from retrieval.answering.llm_endpoint import endpoints
from retrieval.model.answer import FinalAnswer

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServiceMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "flux_requests", "HTTP requests by endpoint and status code", ["endpoint", "status"], registry=self.registry
        )
        self.request_seconds = Histogram(
            "flux_request_seconds",
            "HTTP request latency",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.answers = Counter(
            "flux_answers",
            "Answers by mode, judge verdict and cache outcome",
            ["mode", "verdict", "cached"],
            registry=self.registry,
        )
        self.stage_seconds = Histogram(
            "flux_stage_seconds", "Pipeline stage latency", ["stage"], buckets=LATENCY_BUCKETS, registry=self.registry
        )
        self.refusals = Counter("flux_refusals", "Questions refused by the input guardrail", registry=self.registry)
        self.cache_events = Gauge(
            "flux_cache_events", "Cache hits, misses and fallbacks since start", ["event"], registry=self.registry
        )
        self.llm_calls = Counter(
            "flux_llm_calls",
            "LLM calls by step and outcome (ok, cut, timeout, deadline, busy, "
            "refused, rejected, malformed, unreachable, error)",
            ["step", "outcome"],
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "flux_llm_tokens",
            "LLM tokens by step and direction (in: prompt, out: completion)",
            ["step", "direction"],
            registry=self.registry,
        )
        self.llm_call_seconds = Histogram(
            "flux_llm_call_seconds",
            "LLM call latency, queueing included",
            ["step"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.llm_queue_seconds = Histogram(
            "flux_llm_queue_seconds",
            "Time LLM calls waited in Flux for a free slot at the endpoint",
            ["step"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.llm_endpoint = Gauge(
            "flux_llm_endpoint_requests",
            "LLM requests now in flight and waiting, per endpoint",
            ["endpoint", "state"],
            registry=self.registry,
        )

    def observe_answer(self, answer: FinalAnswer) -> None:
        if answer.refused:
            self.refusals.inc()
        self.answers.labels(answer.mode, answer.retrieval_quality, answer.cached or "none").inc()
        for stage, ms in answer.timings_ms.items():
            self.stage_seconds.labels(stage).observe(ms / 1000)
        for call in answer.llm_calls:
            self.llm_calls.labels(call.step, call.outcome).inc()
            self.llm_call_seconds.labels(call.step).observe(call.ms / 1000)
            self.llm_queue_seconds.labels(call.step).observe(call.queued_ms / 1000)
            if call.tokens_in is not None:
                self.llm_tokens.labels(call.step, "in").inc(call.tokens_in)
            if call.tokens_out is not None:
                self.llm_tokens.labels(call.step, "out").inc(call.tokens_out)

    def render(self, cache_stats: dict[str, int]) -> bytes:
        for event, value in cache_stats.items():
            self.cache_events.labels(event).set(value)
        for endpoint in endpoints():
            self.llm_endpoint.labels(endpoint.url, "in_flight").set(endpoint.in_flight)
            self.llm_endpoint.labels(endpoint.url, "waiting").set(endpoint.waiting)
        return generate_latest(self.registry)


def cache_counters(stats: dict[str, Any], prefix: str = "") -> dict[str, int]:
    """The cache's nested stats as flat `flux_cache_events` labels (`redis_hits`, …); non-numbers are left out."""
    out: dict[str, int] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            out |= cache_counters(value, f"{prefix}{key}_")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = int(value)
    return out
