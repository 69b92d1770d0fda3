"""Questions through the LLM path against an OpenAI-compatible server: wall time per question, calls per question,
tokens per call, and the answers the offline path stood in for, and why.

    make llm-server && .flux/llm-server/bin/python -m llama_cpp.server --model "$(make -s llm-model)" \\
        --model_alias smollm2 --port 8091 --n_ctx 4096 &
    eval "$(.venv/bin/flux env)"
    FLUX_LLM_BASE_URL=http://127.0.0.1:8091/v1 FLUX_LLM_MODEL=smollm2 .venv/bin/python benchmarks/llm_questions.py
    .venv/bin/python benchmarks/llm_questions.py --scripted        # the scripted server (instant, well-formed replies)
    PYTHONPATH=<an older checkout> … benchmarks/llm_questions.py   # the same questions, older code

Needs the published demo index (`make run`). Caches off, thinking mode (screen, plan, judge, answer). An older
version of the code records no LLM calls: its rows show the wall time, the provider and the warnings only; pass
`--server-log` (the model server's access log) to count the requests it sent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

QUESTIONS = (
    "What does TP53 do in apoptosis?",
    "Which genes are in Glycolysis?",
    "Is Glycolysis part of Metabolism?",
    "What does BRCA1 do in DNA repair?",
    "How does mismatch repair correct replication errors?",
    "Which Reactome pathway corresponds to KEGG hsa00010?",
)


def ask_all(questions: tuple[str, ...], sent: Callable[[], int] | None) -> list[dict[str, Any]]:
    from dagster_project.core.settings import FluxSettings
    from retrieval.caching.cache import Cache
    from retrieval.pipeline import Pipeline

    settings = FluxSettings()
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    pipeline = Pipeline.from_settings(settings, cache=off)
    rows = []
    for question in questions:
        sent_before = sent() if sent else 0
        started = time.perf_counter()
        answer = pipeline.ask(question, "thinking")
        calls = [c.model_dump() for c in getattr(answer, "llm_calls", [])]
        rows.append(
            {
                "question": question,
                "wall_s": round(time.perf_counter() - started, 1),
                "kind": answer.kind,
                "provider": answer.provider,
                "requests": sent() - sent_before if sent else None,
                "calls": [f"{c['step']}:{c['outcome']}:{c['tokens_out']}t:{c['ms'] / 1000:.1f}s" for c in calls],
                "tokens_out": [c["tokens_out"] for c in calls],
                "answer": answer.answer[:100],
                "llm_warnings": [w for w in answer.warnings if "LLM" in w or "generation" in w or "judge" in w],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _logged_requests(server_log: Path) -> Callable[[], int]:
    # The access log's line: a traceback names the route too.
    return lambda: server_log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripted", action="store_true", help="Start the scripted server and ask it instead.")
    parser.add_argument("--server-log", type=Path, help="The model server's access log (counts requests).")
    parser.add_argument("--out", type=Path, help="Write the rows as JSON here too.")
    args = parser.parse_args()
    server = None
    sent = _logged_requests(args.server_log) if args.server_log else None
    if args.scripted:
        sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests.support; PYTHONPATH still comes first
        from tests.support import llm_server

        # A well-behaved model for every step; an older checkout's support module has only the answer responder.
        server = llm_server.LLMServer(getattr(llm_server, "stepwise_responder", lambda: llm_server.citing_responder)())
        server.start()
        sent = lambda: len(server.requests)  # noqa: E731
        os.environ["FLUX_LLM_BASE_URL"], os.environ["FLUX_LLM_MODEL"] = server.base_url, "scripted"
    if not os.environ.get("FLUX_LLM_BASE_URL"):
        raise SystemExit("set FLUX_LLM_BASE_URL (or pass --scripted)")
    try:
        rows = ask_all(QUESTIONS, sent)
    finally:
        if server is not None:
            server.stop()
    walls = [r["wall_s"] for r in rows]
    calls = [len(r["calls"]) for r in rows]
    fell_back = sum(r["provider"].startswith("offline") for r in rows)
    print(
        f"\n{len(rows)} questions: wall {sum(walls):.1f} s in all, max {max(walls):.1f} s; "
        f"{sum(calls)} LLM calls ({sum(calls) / len(rows):.1f} per question); "
        f"{fell_back} answered by the offline stand-in"
    )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
