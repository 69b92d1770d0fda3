"""Load: concurrent clients sending mixed requests to a real `flux serve` process, cached and cold.

    FLUX_SOURCE_MODE=snapshot .venv/bin/python benchmarks/load.py [--clients 50] [--requests 200] [--cold-requests 20]

Each client is a thread with its own HTTP connection. The mix per client: 60 % POST /query (quick; PubMedQA
questions and graph questions), 15 % POST /search, 15 % GET /health, 10 % GET /answers/{id}. "Cached": the
service's Redis caches on and warmed with one pass over the questions; "cold": a second service with
FLUX_CACHE_ENABLED=false, so every question is retrieved and answered. A ratio below 1 against the baseline is the
cost of answering. The baseline is GET /openapi.json
(a cached document: the cost of HTTP and the server loop alone), 20 requests per client. Any 5xx, transport error or
unexpected status counts as an error. Prints p50 / p95 / p99 latency, requests/s and errors per phase.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from degraded_latency import QUESTIONS as GRAPH_AND_TEXT_QUESTIONS  # benchmarks/ is on sys.path

from dagster_project.core.settings import get_settings

GRAPH_QUESTIONS = GRAPH_AND_TEXT_QUESTIONS[:6]  # the typed-answer kinds (degraded_latency.py)


BASELINE_REQUESTS = 20  # per client


@dataclass
class Phase:
    name: str
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, ms: float, error: str | None) -> None:
        with self.lock:
            self.latencies_ms.append(ms)
            if error:
                self.errors.append(error)

    @property
    def rps(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0


def start_service(port: int, cache: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FLUX_CACHE_ENABLED": str(cache).lower(), "FLUX_LOG_QUERIES_TO_MLFLOW": "false"}
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "flux"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"flux serve exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        time.sleep(0.5)
    process.kill()
    raise SystemExit("flux serve did not become healthy within 180 s")


def request_plan(
    questions: list[str], answer_id: str, n: int, seed: int, baseline: bool
) -> list[tuple[str, str, dict[str, object] | None]]:
    if baseline:
        return [("GET", "/openapi.json", None)] * n
    rng = random.Random(seed)
    plan: list[tuple[str, str, dict[str, object] | None]] = []
    for _ in range(n):
        roll = rng.random()
        question = rng.choice(questions)
        if roll < 0.60:
            plan.append(("POST", "/query", {"question": question, "mode": "quick"}))
        elif roll < 0.75:
            plan.append(("POST", "/search", {"question": question}))
        elif roll < 0.90:
            plan.append(("GET", "/health", None))
        else:
            plan.append(("GET", f"/answers/{answer_id}", None))
    return plan


def run_phase(name: str, port: int, plans: list[list[tuple[str, str, dict[str, object] | None]]]) -> Phase:
    phase = Phase(name)

    def client(plan: list[tuple[str, str, dict[str, object] | None]]) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as http:
            for method, path, body in plan:
                started = time.perf_counter()
                try:
                    response = http.request(method, path, json=body)
                    error = None if response.status_code == 200 else f"{path}: HTTP {response.status_code}"
                except httpx.HTTPError as exc:
                    error = f"{path}: {type(exc).__name__}"
                phase.record((time.perf_counter() - started) * 1000, error)

    threads = [threading.Thread(target=client, args=(plan,)) for plan in plans]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    phase.seconds = time.perf_counter() - started
    return phase


def measure(
    port: int, questions: list[str], clients: int, requests: int, warm: Callable[[], None] | None
) -> tuple[Phase, Phase, str]:
    first = httpx.post(
        f"http://127.0.0.1:{port}/query", json={"question": questions[0], "mode": "quick"}, timeout=300
    ).json()
    if warm is not None:
        warm()
    baseline = run_phase(
        "GET /openapi.json",
        port,
        [request_plan(questions, "", BASELINE_REQUESTS, seed, True) for seed in range(clients)],
    )
    mixed = run_phase(
        "mixed", port, [request_plan(questions, first["answer_id"], requests, seed, False) for seed in range(clients)]
    )
    return baseline, mixed, first["answer_id"]


def report(label: str, baseline: Phase, mixed: Phase) -> None:
    for phase in (baseline, mixed):
        lat = np.array(phase.latencies_ms)
        p50, p95, p99 = np.percentile(lat, [50, 95, 99])
        print(
            f"{label:<7} {phase.name:<18} {len(lat):>7} {len(phase.errors):>6} {p50:9.1f} {p95:9.1f} {p99:9.1f}"
            f" {phase.rps:9.1f} {phase.rps / baseline.rps:10.2f}x"
        )
        if phase.errors:
            print("        first errors:", json.dumps(phase.errors[:5]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200, help="per client, cached phase")
    parser.add_argument("--cold-requests", type=int, default=20, help="per client, cold phase")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    settings = get_settings()
    data = json.loads((settings.sources.snapshot_dir / "pubmedqa" / "ori_pqal.json").read_text())
    questions = [item["QUESTION"] for item in list(data.values())[:34]] + GRAPH_QUESTIONS
    print(f"{args.clients} clients; {len(questions)} distinct questions")
    print(
        f"{'cache':<7} {'phase':<18} {'requests':>7} {'errors':>6} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9}"
        f" {'req/s':>9} {'vs baseline':>11}"
    )
    for cached, per_client in ((True, args.requests), (False, args.cold_requests)):
        service = start_service(args.port, cache=cached)
        try:

            def warm(port: int = args.port) -> None:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as http:
                    for q in questions:
                        http.post("/query", json={"question": q, "mode": "quick"})
                        http.post("/search", json={"question": q})

            baseline, mixed, _ = measure(args.port, questions, args.clients, per_client, warm if cached else None)
            report("cached" if cached else "cold", baseline, mixed)
        finally:
            service.terminate()
            service.wait(timeout=30)


if __name__ == "__main__":
    main()
