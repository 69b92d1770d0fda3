"""The question deadline's own figures: how long a question with an LLM budget B takes when the LLM server stalls,
how far its LLM calls run past B, and what the offline stand-in adds after them, against the same questions
answered offline (no LLM) in this process.

    eval "$(.venv/bin/flux env)"   # the published demo index (`make run`)
    .venv/bin/python benchmarks/llm_deadline.py [--budgets 1 2 4 8] [--rounds 3]

The server is the scripted one (tests/support/llm_server.py) with every reply 60 s late: a model that never answers
within the budget. Each question gets a fresh server, so no request abandoned by the question before holds the
endpoint's slot. Caches off, thinking mode (screen, plan, judge, answer), the answer reserve half the budget, as
tests/integration/test_llm_deadline.py sets them. Per budget it prints the wall time (p50 / max) and its ratio to
B plus the offline question's time; the overshoot, how far any LLM call ran past the deadline (past its own start,
for a call begun after it); and the time after the last call (the offline stand-in, its validation and grounding)
against the offline question's whole time. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from dagster_project.core.settings import FluxSettings, get_settings
from retrieval.answering.llm import OpenAICompatibleProvider
from retrieval.answering.offline import OfflineProvider
from retrieval.caching.cache import Cache
from retrieval.pipeline import Pipeline

QUESTIONS = (
    "What does TP53 do in apoptosis?",
    "How does insulin signalling regulate glucose uptake?",
    "Which enzymes catalyse glycolysis?",
)
STALL_S = 60.0  # far past every budget measured: the deadline alone ends each call


def _use(pipeline: Pipeline, settings: FluxSettings, provider: OfflineProvider | OpenAICompatibleProvider) -> None:
    pipeline.provider = provider
    pipeline.settings = pipeline.retriever.settings = pipeline.answerer.settings = settings


def offline_ms(pipeline: Pipeline, settings: FluxSettings, questions: list[str]) -> list[float]:
    _use(pipeline, settings, OfflineProvider())
    walls = []
    for question in questions:
        started = time.perf_counter()
        pipeline.ask(question, "thinking")
        walls.append((time.perf_counter() - started) * 1000)
    return walls


def stalled(pipeline: Pipeline, settings: FluxSettings, budget: float, question: str) -> dict[str, float]:
    """One question against a server that stalls, in ms from its start: its wall time, the end of its last LLM call,
    and the furthest any call ran past the deadline (past its own start, when it began after it)."""
    from tests.support.llm_server import LLMReply, LLMServer
    from tests.support.llm_timing import CallEnds

    server = LLMServer().start()
    server.script(*[LLMReply.slow(STALL_S, "{}")] * 12)
    calls = CallEnds()
    try:
        llm = settings.evolve(
            llm_base_url=server.base_url,
            llm_model="scripted",
            llm_question_budget=budget,
            llm_answer_reserve=budget / 2,
            llm_timeout=30.0,
        )
        _use(pipeline, llm, OpenAICompatibleProvider.from_settings(llm))
        started = time.monotonic()  # CallEnds' clock
        answer = pipeline.ask(question, "thinking", on_event=calls)
        wall = (time.monotonic() - started) * 1000
    finally:
        server.stop()
    if answer.provider != "offline-extractive" or not calls.ended:
        raise SystemExit(f"expected the offline stand-in after LLM calls, got {answer.provider}: {answer.warnings}")
    return {
        "wall": wall,
        "last_call": (calls.last - started) * 1000,
        "past": calls.past(started + budget) * 1000,
        "calls": len(answer.llm_calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests.support; PYTHONPATH still comes first
    settings = get_settings()
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off, provider=OfflineProvider())
    questions = list(QUESTIONS) * args.rounds
    offline_ms(pipeline, settings, ["warm-up: what is glycolysis?"])  # lexicons, models
    baseline = offline_ms(pipeline, settings, questions)
    base = float(np.percentile(baseline, 50))
    print(f"offline (no LLM)  p50 {base:7.1f} ms  max {max(baseline):7.1f} ms  ({len(questions)} questions)")
    for budget in args.budgets:
        runs = [stalled(pipeline, settings, budget, q) for q in questions]
        walls = [r["wall"] for r in runs]
        over = [r["past"] for r in runs]
        after = [r["wall"] - r["last_call"] for r in runs]
        p50, after_p50 = float(np.percentile(walls, 50)), float(np.percentile(after, 50))
        print(
            f"budget {budget:4.1f} s  wall p50 {p50:7.1f} ms  max {max(walls):7.1f} ms  "
            f"p50/(B+offline) {p50 / (budget * 1000 + base):4.2f}x  "
            f"overshoot p50 {np.percentile(over, 50):6.1f} ms  max {max(over):6.1f} ms  "
            f"after the last call p50 {after_p50:6.1f} ms ({after_p50 / base:4.2f}x offline)  "
            f"calls {min(r['calls'] for r in runs)}-{max(r['calls'] for r in runs)}"
        )


if __name__ == "__main__":
    main()
