"""Eval scorecards (group `evals`): retrieval, answers and resolution, measured on the *candidate* index through
`retrieval/` exactly as serving reads it. Each is stored in Postgres, logged as one MLflow run and shown as
Markdown + plot metadata; blocking regression checks (checks/scorecards.py) stand between them and publishing."""

import dagster as dg

from dagster_project.assets.search_index import candidate_index
from dagster_project.evals import answer_eval, resolution_eval, retrieval_eval
from dagster_project.evals.questions import relational_questions, retrieval_questions
from dagster_project.evals.report import (
    ablation_markdown,
    bar_plot,
    histogram_plot,
    image_markdown,
    log_to_mlflow,
    metrics_markdown,
)
from dagster_project.evals.store import save_run, set_mlflow_run
from dagster_project.resources import PostgresResource
from dagster_project.settings import FluxSettings, get_settings
from dagster_project.versions import pipeline_version
from retrieval.cache import Cache
from retrieval.index_state import IndexState
from retrieval.index_state import candidate_index as latest_candidate
from retrieval.pipeline import Pipeline

EVAL_GROUP = "evals"


def eval_pipeline(settings: FluxSettings, index: IndexState) -> Pipeline:
    """Serving's pipeline, pinned to the candidate and with every cache off (an eval must not read answers)."""
    off = Cache(None, embedding_ttl=1, retrieval_ttl=1, answer_ttl=1, semantic_threshold=1.0, enabled=False)
    return Pipeline.from_settings(settings, cache=off).pin(index)


def _candidate(postgres: PostgresResource) -> tuple[FluxSettings, IndexState, Pipeline]:
    settings = get_settings()
    index = latest_candidate(postgres.get_engine())
    return settings, index, eval_pipeline(settings, index)


def _record(context: dg.AssetExecutionContext, postgres: PostgresResource, scorecard: str, index: IndexState,
            params: dict, metrics: dict[str, float], rows: list[dict], image: bytes) -> dict:
    settings = get_settings()
    engine = postgres.get_engine()
    eval_id = save_run(engine, scorecard, context.run_id, index.version, index.dataset_version, pipeline_version(),
                       params, metrics, rows)
    mlflow_id = log_to_mlflow(settings, f"{scorecard}-scorecard", {**params, "index_version": index.version,
                              "dataset_version": index.dataset_version, "pipeline_version": pipeline_version()},
                              metrics, image, rows)
    set_mlflow_run(engine, eval_id, mlflow_id)
    return {"eval_run_id": eval_id, "mlflow_run_id": mlflow_id, "index_version": index.version,
            "questions": int(metrics.get("questions", len(rows)))}


@dg.asset(group_name=EVAL_GROUP, kinds={"python", "mlflow"}, deps=[candidate_index],
          description="Retrieval scorecard: PubMedQA questions (own abstract = relevant document; demo: paper "
          "titles) → document-level hit@1 / hit@5 / MRR@10 and latency for dense, BM25, hybrid and hybrid + "
          "reranker, beside a whole-document baseline (exact cosine, bm25s) measured in the same run.")
def retrieval_scorecard(context: dg.AssetExecutionContext, postgres: PostgresResource) -> dg.MaterializeResult:
    settings, index, pipeline = _candidate(postgres)
    questions = retrieval_questions(settings, pipeline.engine, settings.eval_retrieval_questions)
    if not questions:
        raise dg.Failure("no retrieval questions: the corpus has neither PubMedQA abstracts nor paper titles")
    metrics, rows = retrieval_eval.evaluate(pipeline, questions,
                                            lambda n, total: context.log.info(f"retrieval scorecard {n}/{total}"))
    image = bar_plot({v: {"hit@1": metrics[f"{v}_hit_at_1"], "hit@5": metrics[f"{v}_hit_at_5"],
                          "MRR@10": metrics[f"{v}_mrr_at_10"]} for v in retrieval_eval.VARIANTS},
                     f"Retrieval on {len(questions)} {questions[0].kind} questions")
    params = {"question_set": questions[0].kind, "embedding_model": settings.embedding_model,
              "reranker": pipeline.reranker.name, "dense_top_k": settings.dense_top_k,
              "bm25_top_k": settings.bm25_top_k}
    meta = _record(context, postgres, "retrieval", index, params, metrics, rows, image)
    table = ablation_markdown(metrics, retrieval_eval.VARIANTS)
    return dg.MaterializeResult(metadata={
        **meta, "scorecard": dg.MetadataValue.md(f"{table}\n\n{image_markdown(image, 'retrieval scorecard')}"),
        "hybrid_rerank_hit_at_5": metrics["hybrid_rerank_hit_at_5"],
        "hybrid_rerank_mrr_at_10": metrics["hybrid_rerank_mrr_at_10"],
        "baseline_dense_hit_at_5": metrics["baseline_dense_hit_at_5"]})


@dg.asset(group_name=EVAL_GROUP, kinds={"python", "mlflow"}, deps=[candidate_index],
          description="Answer scorecard: PubMedQA questions plus 32 relational questions with expected ids, "
          "answered in thinking mode → citation validity, claims with a citation, expected-id hit rate, verdict "
          "mix, re-retrievals, latency (and yes/no/maybe accuracy with an LLM).")
def answer_scorecard(context: dg.AssetExecutionContext, postgres: PostgresResource) -> dg.MaterializeResult:
    settings, index, pipeline = _candidate(postgres)
    pubmedqa = [q for q in retrieval_questions(settings, pipeline.engine, settings.eval_answer_pubmedqa)
                if q.kind == "pubmedqa"]
    questions = pubmedqa + relational_questions()
    metrics, rows = answer_eval.evaluate(pipeline, questions,
                                         lambda n, total: context.log.info(f"answer scorecard {n}/{total}"))
    image = bar_plot({"answers": {k: metrics[k] for k in ("citation_validity", "claims_with_citation",
                                                          "expected_id_hit_rate", "verdict_good",
                                                          "verdict_partial", "verdict_bad", "fallback_rate")}},
                     f"Answers on {len(questions)} questions ({pipeline.provider.name})")
    params = {"provider": pipeline.provider.name, "reranker": pipeline.reranker.name,
              "pubmedqa_questions": len(pubmedqa), "relational_questions": len(questions) - len(pubmedqa)}
    meta = _record(context, postgres, "answer", index, params, metrics, rows, image)
    return dg.MaterializeResult(metadata={
        **meta, "scorecard": dg.MetadataValue.md(f"{metrics_markdown(metrics)}\n\n"
                                                 f"{image_markdown(image, 'answer scorecard')}"),
        "citation_validity": metrics["citation_validity"], "expected_id_hit_rate": metrics["expected_id_hit_rate"]})


@dg.asset(group_name=EVAL_GROUP, kinds={"python", "mlflow"}, deps=[candidate_index],
          description="Resolution scorecard: precision / recall of the Reactome↔KEGG mapping on well-known "
          "counterparts, pairs per class and the Jaccard distributions per class.")
def resolution_scorecard(context: dg.AssetExecutionContext, postgres: PostgresResource) -> dg.MaterializeResult:
    index = latest_candidate(postgres.get_engine())
    metrics, rows, mappings = resolution_eval.evaluate(postgres.get_engine())
    image = histogram_plot(mappings, "jaccard", "relation", "Jaccard of scored Reactome x KEGG pairs by class")
    params = {"known_pairs_listed": 20}
    meta = _record(context, postgres, "resolution", index, params, metrics, rows, image)
    return dg.MaterializeResult(metadata={
        **meta, "scorecard": dg.MetadataValue.md(f"{metrics_markdown(metrics)}\n\n"
                                                 f"{image_markdown(image, 'resolution scores')}"),
        "precision": metrics["precision"], "recall": metrics["recall"]})


SCORECARD_ASSETS = [retrieval_scorecard, answer_scorecard, resolution_scorecard]
