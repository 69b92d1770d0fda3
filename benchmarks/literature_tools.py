"""Question-time PubMed tools: requests per question and latency against the E-utilities contract server (NCBI's
documented contract and rate limits, the failure-mode set's recorded translations), each against a baseline run
in the same process.

    .venv/bin/python benchmarks/literature_tools.py [--rounds 3] [--no-key]

Variants, per question of the failure-mode set that Flux sends (dagster_project/evals/pubmed_translations.json):
  unchecked   one ESearch of the question's term, its count trusted (what an agent without the check does)
  checked     the checked search: translation check, at most two refinements, no memory
  memory      the same with strategy memory, asked as the set's rephrasings after the originals were searched
Latency includes the client's pacing at NCBI's rate (10 requests/s with a key, 3 without), which is what a
question costs against the real service. p50 / p95 per variant, and ratios against `unchecked`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagster_project.evals.pubmed_eval import ListMemory, load
from dagster_project.sources.pubmed.client import make_eutils_client
from retrieval.pubmed.search import CheckedSearch
from retrieval.pubmed.terms import build
from retrieval.question.literature_questions import read_request
from tests.support.contracts.eutils import KEY
from tests.support.contracts.eutils_tools import EUtilsToolsContractServer


def _quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-key", action="store_true", help="pace at 3 requests/s, as without FLUX_NCBI_API_KEY")
    args = parser.parse_args()
    data = load()
    items = [i for i in data["items"] if i["sent_by"] == "flux"]
    probes = [p for p in data["memory_probes"]["probes"] if p["same_as"]]
    server = EUtilsToolsContractServer(50).start()
    client = make_eutils_client(
        server.url, email="curator@pathway-lab.org", api_key=None if args.no_key else KEY, max_attempts=3, timeout=10.0
    )
    search = CheckedSearch(client)
    timings: dict[str, list[float]] = {"unchecked": [], "checked": [], "memory": []}
    requests: dict[str, list[int]] = {"unchecked": [], "checked": [], "memory": []}
    try:
        for _ in range(args.rounds):
            for item in items:
                request = read_request(item["question"])
                assert request is not None
                sent, started = client.requests, time.perf_counter()
                client.esearch("pubmed", build(request).text(), retmax=5)
                timings["unchecked"].append(time.perf_counter() - started)
                requests["unchecked"].append(client.requests - sent)
                started = time.perf_counter()
                trail = search.search(item["question"], request, retmax=5)
                timings["checked"].append(time.perf_counter() - started)
                requests["checked"].append(trail.requests)
            memory = ListMemory()
            for item in items:
                request = read_request(item["question"])
                assert request is not None
                search.search(item["question"], request, retmax=5, memory=memory)  # type: ignore[arg-type]
            for probe in probes:
                request = read_request(probe["question"])
                assert request is not None
                started = time.perf_counter()
                trail = search.search(probe["question"], request, retmax=5, memory=memory)  # type: ignore[arg-type]
                timings["memory"].append(time.perf_counter() - started)
                requests["memory"].append(trail.requests)
    finally:
        client.close()
        server.stop()
    base_p50, base_p95 = _quantiles(timings["unchecked"])
    pace = "3/s (no key)" if args.no_key else "10/s (key)"
    print(f"{len(items)} questions x {args.rounds} rounds, {len(probes)} rephrasings; NCBI pacing {pace}")
    print(f"{'variant':<10} {'requests/question':>18} {'p50 ms':>8} {'p95 ms':>8} {'p50 x':>6} {'p95 x':>6}")
    for name in ("unchecked", "checked", "memory"):
        p50, p95 = _quantiles(timings[name])
        print(
            f"{name:<10} {statistics.mean(requests[name]):>18.2f} {p50 * 1000:>8.1f} {p95 * 1000:>8.1f} "
            f"{p50 / base_p50:>6.2f} {p95 / base_p95:>6.2f}"
        )
    print(
        f"rephrasings without memory would take the originals' {statistics.mean(requests['checked']):.2f} "
        "requests on average; with memory they took "
        f"{statistics.mean(requests['memory']):.2f}"
    )


if __name__ == "__main__":
    main()
