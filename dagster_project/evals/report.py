"""Scorecard reports: a Markdown table and a PNG for Dagster metadata, and one MLflow run (params, metrics, the
plot and the per-question CSV as artifacts)."""

from __future__ import annotations

import base64
import io
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster_project.core.settings import FluxSettings
from dagster_project.core.tuning import tuning_record, tuning_values

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display on servers and CI). Imported on first use: matplotlib
    takes about half a second to load and only drawing a plot needs it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def metrics_markdown(metrics: dict[str, float], keys: list[str] | None = None) -> str:
    lines = ["| metric | value |", "|---|---|"]
    for key in keys or sorted(metrics):
        if key in metrics:
            value = metrics[key]
            lines.append(
                f"| {key} | {value:.4f} |"
                if isinstance(value, float) and not value.is_integer()
                else f"| {key} | {value:g} |"
            )
    return "\n".join(lines)


def ablation_markdown(metrics: dict[str, float], variants: tuple[str, ...], prefix: str = "") -> str:
    lines = ["| variant | hit@1 | hit@5 | MRR@10 | p50 ms | p95 ms |", "|---|---|---|---|---|---|"]
    metrics = {k.removeprefix(prefix): v for k, v in metrics.items() if k.startswith(prefix)}
    for v in variants:
        if f"{v}_hit_at_1" in metrics:
            lines.append(
                f"| {v} | {metrics[f'{v}_hit_at_1']:.3f} | {metrics[f'{v}_hit_at_5']:.3f} | "
                f"{metrics[f'{v}_mrr_at_10']:.3f} | {metrics[f'{v}_p50_ms']:.1f} | "
                f"{metrics[f'{v}_p95_ms']:.1f} |"
            )
    return "\n".join(lines)


def png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return buffer.getvalue()


def image_markdown(image: bytes, alt: str) -> str:
    return f"![{alt}](data:image/png;base64,{base64.b64encode(image).decode()})"


def bar_plot(values: dict[str, dict[str, float]], title: str) -> bytes:
    """values: group → {bar label → value}; one group of bars per key (e.g. variant → metrics)."""
    import pandas as pd

    frame = pd.DataFrame(values).T
    fig, ax = pyplot().subplots(figsize=(8, 3.6))
    frame.plot.bar(ax=ax, rot=20)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return png(fig)


def histogram_plot(frame: pd.DataFrame, column: str, by: str, title: str) -> bytes:
    fig, ax = pyplot().subplots(figsize=(8, 3.6))
    for label, group in frame.groupby(by):
        ax.hist(group[column], bins=30, alpha=0.6, label=f"{label} ({len(group)})")
    ax.set_xlabel(column)
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(title)
    return png(fig)


def precision_recall_plot(
    curve: pd.DataFrame, chosen: dict[str, float], baseline: dict[str, float], title: str
) -> bytes:
    """Precision (strict and lenient) over recall as the confidence bar falls, with the shipped operating point
    and the baseline marked; `chosen` / `baseline` hold recall, precision_strict, precision_lenient."""
    fig, ax = pyplot().subplots(figsize=(7, 4.2))
    ax.plot(curve["recall"], curve["precision_strict"], label="strict (curated equivalent)")
    ax.plot(curve["recall"], curve["precision_lenient"], label="lenient (curated equivalent or part-of)")
    for point, marker, name in ((chosen, "o", "cross-validated operating point"), (baseline, "x", "baseline")):
        if point:
            ax.scatter(
                [point["recall"]] * 2,
                [point["precision_strict"], point["precision_lenient"]],
                marker=marker,
                s=60,
                zorder=3,
                label=name,
            )
    ax.set_xlabel("equivalence recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    ax.set_title(title)
    return png(fig)


def run_url(settings: FluxSettings, experiment_id: str, run_id: str) -> str:
    """The run's page in the MLflow UI that `make mlflow` serves."""
    return f"http://127.0.0.1:{settings.ops.mlflow_port}/#/experiments/{experiment_id}/runs/{run_id}"


def mlflow_run_url(settings: FluxSettings, run_id: str) -> str:
    from dagster_project.core.experiments import configure_mlflow

    experiment_id = configure_mlflow(
        settings.resolved_mlflow_tracking_uri, settings.ops.mlflow_experiment, settings.home / "mlflow" / "artifacts"
    )
    return run_url(settings, experiment_id, run_id)


def log_to_mlflow(
    settings: FluxSettings,
    run_name: str,
    params: dict[str, Any],
    metrics: dict[str, float],
    image: bytes,
    rows: list[dict],
) -> str:
    import mlflow
    import pandas as pd

    from dagster_project.core.experiments import configure_mlflow

    experiment_id = configure_mlflow(
        settings.resolved_mlflow_tracking_uri, settings.ops.mlflow_experiment, settings.home / "mlflow" / "artifacts"
    )
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name) as run, tempfile.TemporaryDirectory() as tmp:
        mlflow.set_tag("flux.kind", "scorecard")
        # The tuning profile the card was computed with: its preset, version and the digest of the values in effect.
        mlflow.log_params({k: str(v)[:500] for k, v in {**params, **tuning_record(settings)}.items()})
        (Path(tmp) / "tuning.json").write_text(json.dumps(tuning_values(settings), indent=2, sort_keys=True))
        mlflow.log_metrics({k: float(v) for k, v in metrics.items()})
        (Path(tmp) / f"{run_name}.png").write_bytes(image)
        pd.DataFrame(rows).to_csv(Path(tmp) / f"{run_name}_questions.csv", index=False)
        mlflow.log_artifacts(tmp)
        return run.info.run_id
