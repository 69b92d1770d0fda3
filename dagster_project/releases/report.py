"""What a release diff looks like to a person: a bar chart of its change counts and a table of the pathways whose
members moved most."""

from __future__ import annotations

from dagster_project.evals.report import image_markdown, png, pyplot
from dagster_project.releases.diff import PathwayChange

# The figures drawn, in order, and their labels: counts of changes, not the bases they are shares of.
CHANGE_FIGURES = {
    "pathways_added": "pathways added",
    "pathways_removed": "pathways removed",
    "pathways_renamed": "pathways renamed",
    "pathways_with_member_changes": "pathways with member changes",
    "genes_renamed_in_members": "member genes renamed",
    "genes_added": "genes added",
    "genes_removed": "genes removed",
    "genes_renamed": "genes renamed",
    "edges_appeared": "edges appeared",
    "edges_disappeared": "edges disappeared",
    "edges_reclassified": "edges changed class",
    "associations_added": "associations added",
    "associations_removed": "associations removed",
    "association_genes_added": "genes with a first association",
    "association_genes_removed": "genes with no association left",
    "diseases_added": "conditions added",
    "diseases_removed": "conditions removed",
}


def change_plot(subject: str, figures: dict[str, int]) -> str:
    """Markdown with an embedded bar chart of the change counts a diff has."""
    shown = {label: figures[key] for key, label in CHANGE_FIGURES.items() if key in figures}
    fig, ax = pyplot().subplots(figsize=(7, 0.45 * len(shown) + 1.2))
    bars = ax.barh(list(shown), list(shown.values()), color="#4c72b0")
    ax.bar_label(bars, padding=3, fontsize=8)
    ax.invert_yaxis()
    ax.set_title(subject, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return image_markdown(png(fig), subject)


def largest_changes_markdown(changes: list[PathwayChange], sample: int = 8) -> str:
    if not changes:
        return "No pathway's gene members changed."
    lines = ["| pathway | name | gained | lost | e.g. gained | e.g. lost |", "|---|---|---|---|---|---|"]
    for c in changes:
        lines.append(
            f"| {c.pathway_id} | {c.name} | {len(c.gained)} | {len(c.lost)} | "
            f"{', '.join(c.gained[:sample])} | {', '.join(c.lost[:sample])} |"
        )
    return "\n".join(lines)
