"""`flux resolution fit`: cross-validate the Reactome ↔ KEGG resolution by KEGG pathway, then fit and save it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dagster_project.cli.output import console
from dagster_project.core.settings import get_settings

resolution_app = typer.Typer(
    help="Reactome ↔ KEGG resolution model: fit on the expert curation's dev half.", no_args_is_help=True
)


@resolution_app.command("fit")
def resolution_fit(
    output: str = typer.Option(None, help="Where to write the model (default: the shipped resolution/model.json)."),
) -> None:
    """Cross-validate the resolution method by KEGG pathway, then fit it on the whole dev half and save it."""
    from dagster_project.resolution.model import MODEL_PATH
    from dagster_project.resolution.refit import fit_from_platform
    from dagster_project.stack import check_postgres

    if output is not None and not Path(output).parent.is_dir():
        # Checked first: otherwise the fit runs for minutes and then fails to write.
        raise typer.BadParameter(
            f"no directory {Path(output).parent} to write {Path(output).name} into", param_hint="--output"
        )
    settings = get_settings()
    check_postgres(settings)
    fit = fit_from_platform(settings, console.status)
    title = f"{fit.pairs} scored pairs, {settings.resolution_curation_path.name}"
    table = Table("metric", "cross-validated", title=title, title_justify="left")
    for metric, value in fit.cross_validation.metrics.items():
        table.add_row(metric, f"{value:.3f}")
    console.print(table)
    target = MODEL_PATH if output is None else Path(output)
    target.write_text(fit.model.to_json())
    console.print(
        f"wrote {fit.model.method_version} (thresholds: equivalent {fit.model.equivalent_threshold:.2f}, "
        f"part_of {fit.model.part_of_threshold:.2f}) to {target}"
    )
