"""`flux evals kinds`: the generated kind questions against the published index, through
the serving pipeline with caches off; the analysts' question sets against the parser; and the plan question sets
(yes/no checks, connections, missing fact types and entities; dev and held-apart) answered through the pipeline,
graded by what the answer says. Per kind and group pass rates and latency, as the answer scorecard computes them
(without recording a scorecard run)."""

from __future__ import annotations

import numpy as np

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.core.stores import engine_for, graph_driver
from dagster_project.evals import abstention_eval, answer_eval, kind_questions
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.evals.grounding import GroundingRule
from dagster_project.evals.heldout import DEV_FILE, HELDOUT_FILE, load_heldout, score
from dagster_project.evals.kind_truth import load_truth
from dagster_project.stack.checks import check_neo4j, check_postgres
from retrieval.kinds.registry import read_question
from retrieval.model.genes import load_lexicon
from retrieval.model.index_state import NoPublishedIndexError, current_index
from retrieval.model.pathways import load_pathways


def report(settings: FluxSettings) -> None:
    check_postgres(settings)  # a dead dependency is one line (FluxConfigError), not a traceback
    check_neo4j(settings)
    engine = engine_for(settings.platform_database_url)
    try:
        index = current_index(engine)
    except NoPublishedIndexError as exc:
        raise FluxConfigError("FLUX_PG_DATABASE", str(exc)) from None
    truth = load_truth(graph_driver(settings), engine)
    questions = kind_questions.generate(truth)
    metrics, _ = answer_eval.evaluate(
        eval_pipeline(settings, index), questions, answer_eval.Grounding(GroundingRule(1, 1), lambda _: None)
    )
    print(f"generated kind questions on index {index.version}")
    for name, value in sorted(metrics.items()):
        print(f"  {name:42s} {value:10.3f}")
    genes, pathways = load_lexicon(engine, index.version), load_pathways(engine, index.version)
    for label, path in (("held-apart", HELDOUT_FILE), ("dev", DEV_FILE)):
        figures, _ = score(read_question, load_heldout(path), genes, pathways)
        print(f"analysts' questions, {label} ({int(figures['heldout_questions'])}):")
        for name, value in sorted(figures.items()):
            print(f"  {name:42s} {value:10.3f}")
    for label, path in (("held-apart", abstention_eval.PLAN_FILE), ("dev", abstention_eval.PLAN_DEV_FILE)):
        plan_questions = abstention_eval.plan_questions(path)
        _, rows = answer_eval.evaluate(
            eval_pipeline(settings, index),
            plan_questions,
            answer_eval.Grounding(GroundingRule(1, 1), lambda _: None),
        )
        print(f"plan questions, {label} ({len(rows)}): right {sum(r['right'] for r in rows) / len(rows):.3f}")
        for group in sorted({r["group"] for r in rows}):
            mine = [r for r in rows if r["group"] == group]
            latency = np.percentile([r["latency_ms"] for r in mine], [50, 95])
            print(
                f"  {group:24s} {sum(r['right'] for r in mine):4d}/{len(mine):<4d} "
                f"{sum(r['right'] for r in mine) / len(mine):6.3f}   p50 {latency[0]:6.1f} ms  p95 "
                f"{latency[1]:6.1f} ms"
            )
