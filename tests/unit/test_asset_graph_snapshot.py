"""The asset graph against a committed snapshot (tests/unit/snapshots/asset_graph.json): keys, groups, kinds,
dependencies, checks, automation conditions, freshness, jobs, schedules and sensors. An intended change is
accepted by regenerating the file (`UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest <this file>`) and reviewing
its diff; any other change fails here first."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.definitions import build_definitions

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.json"


def condition_tree(condition: dg.AutomationCondition | None) -> Any:
    """A readable form of a condition: its label (or class) and its children's, nested."""
    if condition is None:
        return None
    name = condition.get_label() or type(condition).__name__
    children = [condition_tree(child) for child in condition.children]
    return {name: children} if children else name


def graph_snapshot(defs: dg.Definitions) -> dict[str, Any]:
    graph = defs.resolve_asset_graph()
    # Each distinct condition once, by a short digest of its tree; assets name the digest.
    conditions: dict[str, Any] = {}
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=dg.AssetKey.to_user_string):
        node = graph.get(key)
        freshness = node.freshness_policy
        tree = condition_tree(node.automation_condition)
        digest = hashlib.sha256(json.dumps(tree, sort_keys=True).encode()).hexdigest()[:12] if tree else None
        if digest:
            conditions[digest] = tree
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "executable": node.is_executable,
            "kinds": sorted(node.kinds),
            "deps": sorted(parent.to_user_string() for parent in node.parent_keys),
            "automation": digest,
            "freshness_fail_window_s": freshness.fail_window.to_timedelta().total_seconds() if freshness else None,
        }
    checks = sorted(
        f"{key.asset_key.to_user_string()}:{key.name}" + (" (blocking)" if graph.get_check_spec(key).blocking else "")
        for key in graph.asset_check_keys
    )
    return {
        "assets": assets,
        "checks": checks,
        "conditions": conditions,
        "jobs": sorted(job.name for job in defs.jobs or []),
        "schedules": {s.name: [s.cron_schedule, s.execution_timezone] for s in defs.schedules or []},
        "sensors": {s.name: s.minimum_interval_seconds for s in defs.sensors or []},
        "resources": sorted(defs.resources or {}),
    }


def test_the_asset_graph_matches_the_committed_snapshot() -> None:
    # Defaults only (tests/unit/conftest.py clears FLUX_ variables): the snapshot must not depend on whoever runs it.
    current = graph_snapshot(build_definitions(FluxSettings()))
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    committed = json.loads(SNAPSHOT.read_text())
    changed = sorted(
        k
        for k in current["assets"].keys() | committed["assets"].keys()
        if current["assets"].get(k) != committed["assets"].get(k)
    )
    assert not changed, f"assets changed against the snapshot: {changed} (UPDATE_SNAPSHOTS=1 if intended)"
    assert current == committed, "the graph changed against the snapshot (UPDATE_SNAPSHOTS=1 if intended)"


def test_the_drawn_asset_graph_has_every_asset_and_dependency_of_the_snapshot(tmp_path: Path) -> None:
    """docs/asset-graph.svg is drawn from this graph: one node per asset, one edge per dependency, no cycle."""
    from dagster_project.defs.asset_graph import asset_digraph, draw

    committed = json.loads(SNAPSHOT.read_text())["assets"]
    digraph = asset_digraph(build_definitions(FluxSettings()))
    assert set(digraph.nodes) == set(committed)
    assert set(digraph.edges) == {(dep, key) for key, asset in committed.items() for dep in asset["deps"]}
    draw(digraph, tmp_path / "graph.svg")
    svg = (tmp_path / "graph.svg").read_text()
    assert svg.startswith("<?xml") and f"{len(committed)} assets" in svg
