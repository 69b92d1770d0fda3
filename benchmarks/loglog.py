"""One log-log plot per scaling benchmark, committed next to the script that drew it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def save_loglog(
    path: Path, title: str, xlabel: str, ylabel: str, series: Mapping[str, tuple[Sequence[float], Sequence[float]]]
) -> Path:
    """Each series as points joined by a line, both axes logarithmic, with a dotted slope-1 guide through the
    first point of the first series (linear growth)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    first_x, first_y = next(iter(series.values()))
    if len(first_x) > 1:
        ax.plot(
            [first_x[0], first_x[-1]],
            [first_y[0], first_y[0] * first_x[-1] / first_x[0]],
            ":",
            color="grey",
            label="linear growth",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
