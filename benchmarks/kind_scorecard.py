"""The answer scorecard's generated kind questions graded in bulk (batched plans, dagster_project/evals/kind_eval.py)
against each question asked through `Pipeline.ask` one at a time, in this process, on the configured index: the
seconds each takes, the ratio, and whether every grade and every gated figure is the same.

    .venv/bin/python benchmarks/kind_scorecard.py [--worse-reader]          # the demo (after `make run`)
    FLUX_SOURCE_MODE=snapshot FLUX_PG_DATABASE=flux_snapshot .venv/bin/python benchmarks/kind_scorecard.py

`--worse-reader` reads every question as the six oldest kinds did (the regression gate's deliberately worse parser,
tests/support/plans.py): most questions become literature searches, which one-at-a-time grading runs and bulk grading
grades on their plan. Needs the published index. Prints; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from dagster_project.core.settings import get_settings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.evals import kind_eval, kind_questions
from dagster_project.evals.answer_eval import eval_pipeline, metrics
from dagster_project.evals.gate import GATED
from dagster_project.evals.kind_truth import load_truth
from retrieval.kinds import registry
from retrieval.model.index_state import current_index

ROW_FIELDS = ("question_id", "expected_kind", "answer_kind", "kind_pass", "absent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worse-reader", action="store_true", help="read questions as the six oldest kinds did")
    args = parser.parse_args()
    settings = get_settings()
    engine = engine_for(settings.platform_database_url)
    index = current_index(engine)
    questions = kind_questions.generate(load_truth(graph_driver(settings), engine))
    if args.worse_reader:
        sys.path.append(str(Path(__file__).resolve().parents[1]))  # the checkout, for tests.support
        from tests.support.plans import six_kinds

        registry.read_question = six_kinds
    pipeline = eval_pipeline(settings, index)
    started = time.perf_counter()
    bulk = kind_eval.evaluate(pipeline, questions)
    bulk_s = time.perf_counter() - started
    started = time.perf_counter()
    alone = kind_eval.evaluate_one_at_a_time(pipeline, questions)
    alone_s = time.perf_counter() - started
    bulk_figures, alone_figures = metrics(bulk), metrics(alone)
    same_rows = [[r[f] for f in ROW_FIELDS] for r in bulk] == [[r[f] for f in ROW_FIELDS] for r in alone]
    gated = [k for k in GATED["answer"] if k.startswith(("kinds_", "not_found_"))]  # the kind questions' figures
    same_figures = {k: v for k, v in bulk_figures.items() if "latency" not in k} == {
        k: v for k, v in alone_figures.items() if "latency" not in k
    }
    print(
        f"index {index.version} ({settings.sources.source_mode}), {len(questions)} generated questions"
        f"{', worse reader' if args.worse_reader else ''}"
    )
    print(
        f"  bulk {bulk_s:7.1f} s ({sum(r['graded_on'] == 'plan' for r in bulk)} graded on their plan)   "
        f"one at a time {alone_s:7.1f} s   {alone_s / max(bulk_s, 1e-9):5.1f}x"
    )
    print(f"  every row's grade and answer kind the same: {same_rows}")
    print(f"  every figure but latency the same: {same_figures}")
    for key in gated:
        print(f"  {key:24s} bulk {bulk_figures[key]:.4f}   one at a time {alone_figures[key]:.4f}")


if __name__ == "__main__":
    main()
