"""Who owns each asset and where it lives, as the Dagster UI shows them: an owning team per group, tags for the
source, the layer and the tier, and a code reference to the file and line that defines it.

- Owners are teams (`team:<name>`), one per group, so the catalog can be filtered by who to ask.
- `layer` says where in the flow an asset sits (raw → release → documents → index / graph → eval → serving; dbt
  models and the schema apart); `tier` is `serving` for what an answer reads or what gates it, `pipeline` for the
  rest; `source` names the source a per-source asset belongs to.
- Code references point at the Python function that builds an asset (Dagster's `with_source_code_references`), so
  "Open source" in the UI goes to the file and line; dbt models keep the references dagster-dbt gives them.
- Code versions: a Python asset's is a digest of the platform's code (core/versions.py), a dbt model's is its SQL's.
  With it, an asset that returns no data version of its own gets one Dagster derives from the code version and its
  inputs' data versions, so a rerun that changed nothing leaves nothing downstream stale ("Upstream data" means the
  data changed).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import dagster as dg

from dagster_project.core.versions import platform_code_digest
from dagster_project.sources.registry import SOURCES

OWNERS: Mapping[str, str] = {
    "raw": "team:data-platform",
    "releases": "team:data-platform",
    "sources": "team:data-platform",
    "platform": "team:data-platform",
    "tables": "team:data-platform",
    "dbt": "team:analytics",
    "index": "team:search",
    "graph": "team:knowledge-graph",
    "evals": "team:search",
    "serving": "team:search",
}
LAYERS: Mapping[str, str] = {
    "raw": "raw",
    "releases": "release",
    "sources": "documents",
    "platform": "schema",
    "tables": "table",
    "dbt": "dbt",
    "index": "index",
    "graph": "graph",
    "evals": "eval",
    "serving": "serving",
}
SERVING_TIER = frozenset({"index", "graph", "evals", "serving"})  # what an answer reads, or what gates it


def ownership(spec: dg.AssetSpec) -> dg.AssetSpec:
    """Owners and tags; and for a Python asset without one, the platform's code version (dbt models have theirs)."""
    group = spec.group_name or "default"
    tags = {"layer": LAYERS.get(group, group), "tier": "serving" if group in SERVING_TIER else "pipeline"}
    name = spec.key.path[-1]
    source = next((s for s in SOURCES if name.startswith(f"{s}_")), None)
    if source is not None:
        tags["source"] = source
    owner = OWNERS.get(group)
    spec = spec.merge_attributes(owners=[owner] if owner else [], tags=tags)
    return spec if spec.code_version else spec.replace_attributes(code_version=platform_code_digest())


def with_code_references(assets: list) -> list:
    """The Python-defined assets with code references to their definitions (specs and dbt assets as they are)."""
    with warnings.catch_warnings():
        # Beta in Dagster 1.13; what it attaches is checked by tests/unit/test_definitions.py.
        warnings.simplefilter("ignore", dg.BetaWarning)
        return list(dg.with_source_code_references(assets))


def apply_ownership(defs: dg.Definitions) -> dg.Definitions:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return defs.map_asset_specs(func=ownership)
