"""Draw the asset graph of the definitions as an SVG (`make asset-graph` writes docs/asset-graph.svg).

Assets are laid out left to right by dependency depth, coloured by group; dbt's models share the `dbt` group.
"""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
import matplotlib

matplotlib.use("Agg")  # no display: a file is the only output
import matplotlib.pyplot as plt
import networkx as nx

from dagster_project.core.settings import get_settings
from dagster_project.defs.definitions import build_definitions


def asset_digraph(defs: dg.Definitions) -> nx.DiGraph:
    """Nodes are asset keys (with their group); edges run from an upstream asset to the one that reads it."""
    graph = defs.resolve_asset_graph()
    digraph = nx.DiGraph()
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        digraph.add_node(key.to_user_string(), group=node.group_name or "default")
        for parent in node.parent_keys:
            digraph.add_edge(parent.to_user_string(), key.to_user_string())
    return digraph


def draw(digraph: nx.DiGraph, target: Path) -> None:
    for depth, layer in enumerate(nx.topological_generations(digraph)):
        for name in layer:
            digraph.nodes[name]["depth"] = depth
    positions = nx.multipartite_layout(digraph, subset_key="depth", align="vertical", scale=1.0)
    groups = sorted({data["group"] for _, data in digraph.nodes(data=True)})
    palette = plt.get_cmap("tab10")
    colours = {group: palette(i % 10) for i, group in enumerate(groups)}
    figure, axes = plt.subplots(figsize=(16, 10))
    nx.draw_networkx_edges(digraph, positions, ax=axes, alpha=0.35, arrowsize=8, node_size=60)
    nx.draw_networkx_nodes(
        digraph, positions, ax=axes, node_size=60, node_color=[colours[d["group"]] for _, d in digraph.nodes(data=True)]
    )
    nx.draw_networkx_labels(
        digraph,
        {n: (x, y + 0.012) for n, (x, y) in positions.items()},
        ax=axes,
        font_size=7,
        verticalalignment="bottom",
    )
    for group, colour in colours.items():
        axes.scatter([], [], color=colour, label=group)
    axes.legend(title="group", loc="upper left", fontsize=7, frameon=False)
    axes.set_title(f"Flux asset graph: {digraph.number_of_nodes()} assets, {digraph.number_of_edges()} dependencies")
    axes.axis("off")
    figure.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="svg")
    plt.close(figure)


def main(argv: list[str]) -> None:
    target = Path(argv[0] if argv else "docs/asset-graph.svg")
    digraph = asset_digraph(build_definitions(get_settings()))
    draw(digraph, target)
    print(f"{target}: {digraph.number_of_nodes()} assets, {digraph.number_of_edges()} dependencies")


if __name__ == "__main__":
    main(sys.argv[1:])
