"""Scorecards in Postgres: `eval_runs` (one per scorecard per Dagster run; a retry of the run overwrites it) and
`eval_question_results` (one row per question and variant); the accepted baseline per scorecard."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

SCORECARDS = ("retrieval", "answer", "resolution", "literature_tools")


@dataclass(frozen=True)
class EvalRun:
    id: int
    scorecard: str
    dagster_run_id: str
    index_version: str
    metrics: dict[str, float]
    params: dict[str, Any]
    accepted: bool
    created_at: datetime
    reused_from: int | None = None  # the eval run whose result this one reuses (same inputs)
    dataset_version: str = ""  # the data the candidate index was built from


def save_run(
    engine: Engine,
    scorecard: str,
    dagster_run_id: str,
    index_version: str,
    dataset_version: str,
    pipeline_version: str,
    params: dict[str, Any],
    metrics: dict[str, float],
    rows: list[dict[str, Any]],
    mlflow_run_id: str | None = None,
    input_fingerprint: str | None = None,
) -> int:
    """Upsert on (scorecard, dagster_run_id) and replace its question rows, in one transaction."""
    with engine.begin() as conn:
        run_id = conn.execute(
            text("""
            INSERT INTO eval_runs (scorecard, dagster_run_id, index_version, dataset_version, pipeline_version,
                                   params, metrics, mlflow_run_id, input_fingerprint)
            VALUES (:s, :r, :iv, :dv, :pv, CAST(:params AS jsonb), CAST(:metrics AS jsonb), :ml, :fp)
            ON CONFLICT (scorecard, dagster_run_id) DO UPDATE SET index_version = EXCLUDED.index_version,
                dataset_version = EXCLUDED.dataset_version, pipeline_version = EXCLUDED.pipeline_version,
                params = EXCLUDED.params, metrics = EXCLUDED.metrics, mlflow_run_id = EXCLUDED.mlflow_run_id,
                input_fingerprint = EXCLUDED.input_fingerprint, reused_from = NULL, created_at = now()
            RETURNING id
        """),
            {
                "s": scorecard,
                "r": dagster_run_id,
                "iv": index_version,
                "dv": dataset_version,
                "pv": pipeline_version,
                "params": json.dumps(params),
                "metrics": json.dumps(metrics),
                "ml": mlflow_run_id,
                "fp": input_fingerprint,
            },
        ).scalar_one()
        conn.execute(text("DELETE FROM eval_question_results WHERE eval_run_id = :id"), {"id": run_id})
        if rows:
            conn.execute(
                text(
                    "INSERT INTO eval_question_results (eval_run_id, question_id, variant, question, result)"
                    " VALUES (:id, :qid, :variant, :question, CAST(:result AS jsonb))"
                ),
                [
                    {
                        "id": run_id,
                        "qid": r["question_id"],
                        "variant": r.get("variant", "-"),
                        "question": r.get("question", ""),
                        "result": json.dumps(r, default=str),
                    }
                    for r in rows
                ],
            )
    return int(run_id)


def input_fingerprint(scorecard: str, inputs: dict[str, Any]) -> str:
    """One hash over everything a scorecard's result depends on (JSON with sorted keys, so order never matters)."""
    payload = json.dumps({"scorecard": scorecard, **inputs}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def reuse_run(engine: Engine, scorecard: str, fingerprint: str, dagster_run_id: str) -> EvalRun | None:
    """When an earlier run of `scorecard` had exactly these inputs, its result copied as this Dagster run's (metrics,
    params, question rows, MLflow run; `reused_from` naming it), in one transaction; else None. A retry of this run
    reuses the same source again, never piling up copies."""
    with engine.begin() as conn:
        source = conn.execute(
            text(
                "SELECT id FROM eval_runs WHERE scorecard = :s AND input_fingerprint = :fp AND dagster_run_id <> :r"
                " AND reused_from IS NULL ORDER BY created_at DESC LIMIT 1"
            ),
            {"s": scorecard, "fp": fingerprint, "r": dagster_run_id},
        ).scalar_one_or_none()
        if source is None:
            return None
        run_id = conn.execute(
            text("""
            INSERT INTO eval_runs (scorecard, dagster_run_id, index_version, dataset_version, pipeline_version,
                                   params, metrics, mlflow_run_id, input_fingerprint, reused_from)
            SELECT scorecard, :r, index_version, dataset_version, pipeline_version, params, metrics, mlflow_run_id,
                   input_fingerprint, id FROM eval_runs WHERE id = :src
            ON CONFLICT (scorecard, dagster_run_id) DO UPDATE SET index_version = EXCLUDED.index_version,
                dataset_version = EXCLUDED.dataset_version, pipeline_version = EXCLUDED.pipeline_version,
                params = EXCLUDED.params, metrics = EXCLUDED.metrics, mlflow_run_id = EXCLUDED.mlflow_run_id,
                input_fingerprint = EXCLUDED.input_fingerprint, reused_from = EXCLUDED.reused_from,
                created_at = now()
            RETURNING id
        """),
            {"r": dagster_run_id, "src": source},
        ).scalar_one()
        conn.execute(text("DELETE FROM eval_question_results WHERE eval_run_id = :id"), {"id": run_id})
        conn.execute(
            text(
                "INSERT INTO eval_question_results (eval_run_id, question_id, variant, question, result)"
                " SELECT :id, question_id, variant, question, result FROM eval_question_results"
                " WHERE eval_run_id = :src"
            ),
            {"id": run_id, "src": source},
        )
        row = conn.execute(text(f"SELECT {_COLUMNS} FROM eval_runs WHERE id = :id"), {"id": run_id}).one()
    return _row(row)


def set_mlflow_run(engine: Engine, eval_run_id: int, mlflow_run_id: str) -> None:
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE eval_runs SET mlflow_run_id = :m WHERE id = :id"), {"m": mlflow_run_id, "id": eval_run_id}
        )


def _row(row: Any) -> EvalRun:
    return EvalRun(
        row.id,
        row.scorecard,
        row.dagster_run_id,
        row.index_version,
        dict(row.metrics),
        dict(row.params),
        row.accepted,
        row.created_at,
        row.reused_from,
        row.dataset_version or "",
    )


_COLUMNS = (
    "id, scorecard, dagster_run_id, index_version, metrics, params, accepted, created_at, reused_from, dataset_version"
)


def latest(engine: Engine, scorecard: str, dagster_run_id: str | None = None) -> EvalRun | None:
    where = "scorecard = :s" + (" AND dagster_run_id = :r" if dagster_run_id else "")
    with engine.connect() as conn:
        row = conn.execute(
            text(f"SELECT {_COLUMNS} FROM eval_runs WHERE {where} ORDER BY created_at DESC LIMIT 1"),
            {"s": scorecard, "r": dagster_run_id},
        ).one_or_none()
    return _row(row) if row else None


def accepted_baseline(engine: Engine, scorecard: str) -> EvalRun | None:
    with engine.connect() as conn:
        row = conn.execute(
            text(
                f"SELECT {_COLUMNS} FROM eval_runs WHERE scorecard = :s AND accepted ORDER BY accepted_at DESC LIMIT 1"
            ),
            {"s": scorecard},
        ).one_or_none()
    return _row(row) if row else None


def accept_latest(engine: Engine, scorecards: tuple[str, ...] = SCORECARDS) -> list[EvalRun]:
    """Accept the newest run of each scorecard as its baseline (earlier accepted runs stay in the history)."""
    accepted = []
    with engine.begin() as conn:
        for scorecard in scorecards:
            row = conn.execute(
                text(
                    "UPDATE eval_runs SET accepted = true, accepted_at = now() WHERE id = (SELECT id FROM eval_runs"
                    f" WHERE scorecard = :s ORDER BY created_at DESC LIMIT 1) RETURNING {_COLUMNS}"
                ),
                {"s": scorecard},
            ).one_or_none()
            if row is not None:
                accepted.append(_row(row))
    return accepted


def question_rows(engine: Engine, eval_run_id: int) -> list[dict[str, Any]]:
    """The stored per-question results of one eval run."""
    with engine.connect() as conn:
        results: list[dict[str, Any]] = list(
            conn.execute(
                text("SELECT result FROM eval_question_results WHERE eval_run_id = :id ORDER BY question_id, variant"),
                {"id": eval_run_id},
            ).scalars()
        )
    return results
