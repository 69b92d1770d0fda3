"""Eval scorecards (group `evals`): retrieval, answers and resolution, measured on the *candidate* index through
`retrieval/` exactly as serving reads it. Each is stored in Postgres, logged as one MLflow run and shown as
Markdown + plot metadata; blocking regression checks (checks/scorecards.py) stand between them and publishing."""

from collections.abc import Iterable

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.core.versions import pipeline_version
from dagster_project.defs.assets.search_index import candidate_index
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.evals import (
    abstention_eval,
    answer_eval,
    graph_questions,
    judge_calibration,
    kind_questions,
    pubmed_eval,
    resolution_eval,
    retrieval_eval,
)
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.evals.fingerprint import file_digest, scorecard_inputs
from dagster_project.evals.gate import GATED
from dagster_project.evals.grounding import fitted_rule
from dagster_project.evals.kind_truth import load_truth
from dagster_project.evals.questions import relational_questions, retrieval_questions, retrieval_tasks
from dagster_project.evals.report import (
    ablation_markdown,
    bar_plot,
    histogram_plot,
    image_markdown,
    log_to_mlflow,
    metrics_markdown,
    mlflow_run_url,
    precision_recall_plot,
)
from dagster_project.evals.store import input_fingerprint, reuse_run, save_run, set_mlflow_run
from dagster_project.index.encoder import Embedder
from retrieval.model.index_state import IndexState, latest_candidate
from retrieval.pipeline import Pipeline

EVAL_GROUP = "evals"


def _candidate(postgres: PostgresResource, settings: FluxSettings) -> tuple[IndexState, Pipeline]:
    index = latest_candidate(postgres.get_engine())
    return index, eval_pipeline(settings, index)


def _fingerprint(
    settings: FluxSettings, scorecard: str, index: IndexState, questions: Iterable[object], **extra: object
) -> str:
    return input_fingerprint(
        scorecard, scorecard_inputs(settings, index.version, index.dataset_version, questions, **extra)
    )


def _reused(
    context: dg.AssetExecutionContext,
    postgres: PostgresResource,
    settings: FluxSettings,
    scorecard: str,
    fingerprint: str,
    gated: Iterable[str],
) -> dg.MaterializeResult | None:
    """The stored result of an earlier run with the same inputs, as this run's; None when there is none (or when
    FLUX_EVAL_REUSE_UNCHANGED is off)."""
    if not settings.evals.eval_reuse_unchanged:
        return None
    run = reuse_run(postgres.get_engine(), scorecard, fingerprint, context.run_id)
    if run is None:
        return None
    context.log.info(
        f"{scorecard} scorecard: inputs unchanged since eval run {run.reused_from} "
        f"(fingerprint {fingerprint}); its result is reused, not re-evaluated"
    )
    return dg.MaterializeResult(
        metadata={
            "eval_run_id": run.id,
            "reused": True,
            "reused_from_eval_run": run.reused_from,
            "input_fingerprint": fingerprint,
            "index_version": run.index_version,
            "questions": int(run.metrics.get("questions", 0)),
            "scorecard": dg.MetadataValue.md(
                f"Reused from eval run {run.reused_from}: candidate index, dataset, "
                "questions, settings, scoring code and libraries unchanged.\n\n"
                f"{metrics_markdown(run.metrics)}"
            ),
            **{k: run.metrics[k] for k in gated if k in run.metrics},
        }
    )


def _record(
    context: dg.AssetExecutionContext,
    postgres: PostgresResource,
    settings: FluxSettings,
    scorecard: str,
    index: IndexState,
    params: dict,
    metrics: dict[str, float],
    rows: list[dict],
    image: bytes,
    fingerprint: str,
) -> dict:
    engine = postgres.get_engine()
    eval_id = save_run(
        engine,
        scorecard,
        context.run_id,
        index.version,
        index.dataset_version,
        pipeline_version(),
        params,
        metrics,
        rows,
        input_fingerprint=fingerprint,
    )
    mlflow_id = log_to_mlflow(
        settings,
        f"{scorecard}-scorecard",
        {
            **params,
            "index_version": index.version,
            "dataset_version": index.dataset_version,
            "pipeline_version": pipeline_version(),
        },
        metrics,
        image,
        rows,
    )
    set_mlflow_run(engine, eval_id, mlflow_id)
    return {
        "eval_run_id": eval_id,
        "mlflow_run_id": mlflow_id,
        "mlflow_run": dg.MetadataValue.url(mlflow_run_url(settings, mlflow_id)),
        "index_version": index.version,
        "questions": int(metrics.get("questions", len(rows))),
        "reused": False,
        "input_fingerprint": fingerprint,
    }


@dg.asset(
    group_name=EVAL_GROUP,
    kinds={"python", "mlflow"},
    deps=[candidate_index],
    description="Retrieval scorecard, per task: conclusion → study and MeSH → study (PubMedQA metadata), "
    "keywords → paper (OpenAlex), all gated and never copied from the index (verbatim rate 0), plus the "
    "title lookup, reported only. Document-level hit@1 / hit@5 / MRR@10 and latency for dense, BM25, hybrid "
    "and hybrid + reranker, beside whole-document baselines (exact cosine, bm25s) in the same run.",
)
def retrieval_scorecard(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    index, pipeline = _candidate(postgres, settings)
    tasks = retrieval_tasks(settings, pipeline.retriever.engine, settings.evals.eval_retrieval_questions)
    if not any(tasks.values()):
        raise dg.Failure("no retrieval questions: the corpus has neither PubMedQA abstracts nor papers")
    fingerprint = _fingerprint(settings, "retrieval", index, [(t, q) for t, qs in tasks.items() for q in qs])
    gated = [f"{t}_hybrid_rerank_mrr_at_10" for t in tasks]
    if (reused := _reused(context, postgres, settings, "retrieval", fingerprint, gated)) is not None:
        return reused

    def progress(n: int, total: int) -> None:
        context.log.info(f"retrieval scorecard {n}/{total}")

    metrics, rows = retrieval_eval.evaluate_tasks(pipeline, tasks, progress, store=postgres.get_engine())
    served = {
        f"{t} ({len(qs)})": {
            "served hit@1": metrics[f"{t}_hybrid_rerank_hit_at_1"],
            "served MRR@10": metrics[f"{t}_hybrid_rerank_mrr_at_10"],
            "best baseline MRR@10": max(
                metrics[f"{t}_baseline_dense_mrr_at_10"], metrics[f"{t}_baseline_bm25_mrr_at_10"]
            ),
        }
        for t, qs in tasks.items()
    }
    image = bar_plot(served, "Retrieval per task: served pipeline vs the best whole-document baseline")
    params = {
        "tasks": ",".join(f"{t}:{len(q)}" for t, q in tasks.items()),
        "embedding_model": settings.index.embedding_model,
        "reranker": pipeline.retriever.reranker.name,
        "dense_top_k": settings.retrieval.dense_top_k,
        "bm25_top_k": settings.retrieval.bm25_top_k,
    }
    meta = _record(context, postgres, settings, "retrieval", index, params, metrics, rows, image, fingerprint)
    tables = "\n\n".join(
        f"**{t}** ({len(q)} queries, verbatim rate {metrics[f'{t}_verbatim_rate']:.3f})\n\n"
        + ablation_markdown(metrics, retrieval_eval.VARIANTS, prefix=f"{t}_")
        for t, q in tasks.items()
    )
    return dg.MaterializeResult(
        metadata={
            **meta,
            "scorecard": dg.MetadataValue.md(f"{tables}\n\n{image_markdown(image, 'retrieval scorecard')}"),
            **{k: metrics[k] for k in gated},
        }
    )


JUDGE_LOOP_QUESTIONS = 50  # per lookup task
ANSWER_PLOT = (
    "raw_citation_precision",
    "claims_kept_rate",
    "grounded_claim_rate",
    "relational_pass_rate",
    "gene_list_recall",
    "gene_list_precision",
    "judge_accuracy_right",
    "judge_accuracy_wrong",
    "first_pass_hit_rate",
    "final_hit_rate",
    "kinds_pass_rate",
    "not_found_precision",
    "not_found_recall",
    "answerability_refused",
    "answerability_answered",
)


@dg.asset(
    group_name=EVAL_GROUP,
    kinds={"python", "mlflow"},
    deps=[candidate_index],
    description="Answer scorecard: PubMedQA questions, 32 relational questions, MeSH / keyword lookups and "
    "~500 generated questions of every typed kind (gene facts, counts, compounds, set operations, hierarchy, "
    "yes/no checks, connections, 'not in the index') and ~300 held-apart questions Flux can and cannot "
    "answer, in thinking mode. Gated: the generator's raw reply before validation "
    "(citation precision, claims kept, claims their cited evidence supports), relational pass rate (expected "
    "id in the claims, gene lists against the graph), the kind pass rate and not-found precision / recall, "
    "the share of unanswerable questions refused and of answerable ones answered, the count of confident "
    "non-answers, and the judge's accuracy on right vs hard-negative evidence. Reported: "
    "what re-retrieval rescued, verdict mix, latency (and yes/no/maybe accuracy with an LLM).",
)
def answer_scorecard(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    index, pipeline = _candidate(postgres, settings)
    pubmedqa = [
        q
        for q in retrieval_questions(settings, pipeline.retriever.engine, settings.evals.eval_answer_pubmedqa)
        if q.kind == "pubmedqa"
    ]
    # Searches whose target the first pass can miss (MeSH headings, OpenAlex keywords): where the judge loop's
    # re-retrieval shows what it rescues. PubMedQA titles are found at once, so they cannot show that.
    lookups = [
        q
        for task, qs in retrieval_tasks(settings, pipeline.retriever.engine, JUDGE_LOOP_QUESTIONS).items()
        if task in ("mesh_to_study", "keywords_to_paper")
        for q in qs
    ]
    relational = relational_questions() + graph_questions.generate(pipeline.retriever.driver)
    truth = load_truth(pipeline.retriever.driver, pipeline.retriever.engine)
    kinds = kind_questions.generate(truth)
    abstention = abstention_eval.questions(pipeline.retriever.engine)
    questions = pubmedqa + relational + lookups + kinds + abstention
    fingerprint = _fingerprint(settings, "answer", index, questions, provider=pipeline.provider.name)
    if (reused := _reused(context, postgres, settings, "answer", fingerprint, GATED["answer"])) is not None:
        return reused
    embed = Embedder(model_name=settings.index.embedding_model, dimension=settings.index.embedding_dim).embed_documents
    rule, rule_cv = fitted_rule(embed)
    context.log.info(f"grounding rule {rule} (cross-validated accuracy {rule_cv:.2f} on labelled examples)")
    metrics, rows = answer_eval.evaluate(
        pipeline,
        questions,
        answer_eval.Grounding(rule, embed),
        lambda n, total: context.log.info(f"answer scorecard {n}/{total}"),
    )
    # The judge on labelled evidence needs real questions with a known study: PubMedQA (absent in the demo,
    # whose paper titles are not questions; its gate then skips these metrics, as for a missing task).
    judge_metrics, judge_rows = judge_calibration.evaluate(
        pipeline, pubmedqa, lambda n, total: context.log.info(f"judge calibration {n}/{total}")
    )
    metrics |= judge_metrics | {"grounding_rule_cv_accuracy": rule_cv}
    image = bar_plot(
        {"answers": {k: metrics[k] for k in ANSWER_PLOT if k in metrics}},
        f"Answers on {len(questions)} questions ({pipeline.provider.name})",
    )
    params = {
        "provider": pipeline.provider.name,
        "reranker": pipeline.retriever.reranker.name,
        "pubmedqa_questions": len(pubmedqa),
        "lookup_questions": len(lookups),
        "relational_questions": len(relational),
        "kind_questions": len(kinds),
        "answerability_questions": len(abstention),
        "grounding_rule": f"lexical>={rule.lexical_min} or cosine>={rule.semantic_min}",
        "judge_calibration_questions": len(pubmedqa),
    }
    meta = _record(context, postgres, settings, "answer", index, params, metrics, rows + judge_rows, image, fingerprint)
    return dg.MaterializeResult(
        metadata={
            **meta,
            "scorecard": dg.MetadataValue.md(
                f"{metrics_markdown(metrics)}\n\n{image_markdown(image, 'answer scorecard')}"
            ),
            **{k: metrics[k] for k in GATED["answer"] if k in metrics},
        }
    )


@dg.asset(
    group_name=EVAL_GROUP,
    kinds={"python", "mlflow"},
    deps=[candidate_index],
    description="Resolution scorecard: 5-fold cross-validation by KEGG pathway on the expert curation's dev "
    "half (equivalence recall, strict and lenient precision, part-of recall and direction; gated), the "
    "shipped model's in-sample figures, a mutual-best-Jaccard baseline, the 20-pair smoke test, and a "
    "precision-recall curve over the model's confidence.",
)
def resolution_scorecard(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    index = latest_candidate(postgres.get_engine())
    gated = ("cv_equivalence_recall", "cv_equivalence_precision_strict", "cv_equivalence_precision_lenient")
    fingerprint = _fingerprint(
        settings,
        "resolution",
        index,
        [],
        curation=file_digest(settings.resolution_curation_path),
        mappings=resolution_eval.mappings_digest(postgres.get_engine()),
    )
    if (reused := _reused(context, postgres, settings, "resolution", fingerprint, gated)) is not None:
        return reused
    evaluation = resolution_eval.evaluate(postgres.get_engine(), settings.resolution_curation_path)
    for note in evaluation.notes:
        context.log.warning(note)
    metrics, cv = evaluation.metrics, evaluation.cross_validation
    if cv is not None:
        curve = resolution_eval.precision_recall_curve(cv, int(metrics["cv_equivalent_curated"]))
        point = {k: metrics[f"cv_equivalence_{k}"] for k in ("recall", "precision_strict", "precision_lenient")}
        base = {
            k.removeprefix("baseline_equivalence_"): v
            for k, v in metrics.items()
            if k.startswith("baseline_equivalence_")
        }
        image = precision_recall_plot(curve, point, base, "Reactome ↔ KEGG equivalence, 5-fold CV by KEGG pathway")
    else:
        image = histogram_plot(evaluation.mappings, "jaccard", "relation", "Jaccard of scored pairs by class")
    versions = evaluation.mappings["method_version"].unique().tolist()
    params = {
        "method_version": ",".join(versions),
        "curation": str(settings.resolution_curation_path),
        "cv_folds": 5,
        "notes": " | ".join(evaluation.notes) or "-",
    }
    meta = _record(
        context, postgres, settings, "resolution", index, params, metrics, evaluation.rows, image, fingerprint
    )
    keys = sorted(
        k for k in metrics if k.startswith(("cv_", "baseline_equivalence", "in_sample_equivalence", "known_", "pairs_"))
    )
    return dg.MaterializeResult(
        metadata={
            **meta,
            "method_version": ",".join(versions),
            "scorecard": dg.MetadataValue.md(
                f"{metrics_markdown(metrics, keys)}\n\n{image_markdown(image, 'resolution precision-recall')}"
            ),
            **{k: metrics[k] for k in gated if k in metrics},
        }
    )


@dg.asset(
    group_name=EVAL_GROUP,
    kinds={"python", "mlflow"},
    deps=[candidate_index],
    description="Literature-tools scorecard on the failure-mode set (evals/pubmed_translations.json, its dev "
    "half): the translation check's precision and recall over labelled failures, checked searches replayed "
    "against the recorded translations (right final count, requests per question, refinement rate), and "
    "strategy memory on rephrasings and near misses (hit rate, requests saved, false reuse).",
)
def literature_tools_scorecard(
    context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
) -> dg.MaterializeResult:
    index = latest_candidate(postgres.get_engine())
    gated = GATED["literature_tools"]
    fingerprint = _fingerprint(
        settings, "literature_tools", index, [], failure_modes=file_digest(pubmed_eval.TRANSLATIONS)
    )
    if (reused := _reused(context, postgres, settings, "literature_tools", fingerprint, gated)) is not None:
        return reused
    metrics, rows, per_failure = pubmed_eval.scorecard()
    image = bar_plot(
        {
            code: {
                "found": c["found"] / max(1, c["found"] + c["missed"]),
                "false alarms": c["false"] / max(1, c["found"] + c["false"]),
            }
            for code, c in per_failure.items()
        },
        "Translation check per failure (dev set)",
    )
    meta = _record(
        context,
        postgres,
        settings,
        "literature_tools",
        index,
        {"set": "pubmed_translations.json"},
        metrics,
        rows,
        image,
        fingerprint,
    )
    context.log.info(
        f"literature tools: check precision {metrics['check_precision']:.3f}, recall "
        f"{metrics['check_recall']:.3f}; {metrics['requests_per_question']:.2f} requests per question"
    )
    return dg.MaterializeResult(
        metadata={
            **meta,
            "scorecard": dg.MetadataValue.md(
                f"{metrics_markdown(metrics)}\n\n{image_markdown(image, 'translation check per failure')}"
            ),
            **{k: metrics[k] for k in gated if k in metrics},
        }
    )


SCORECARD_ASSETS = [retrieval_scorecard, answer_scorecard, resolution_scorecard, literature_tools_scorecard]
