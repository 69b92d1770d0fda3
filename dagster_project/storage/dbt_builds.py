"""Which dbt models need building: dbt's own "slim" idea (build what is modified or reads fresher sources), with
the sources' freshness taken from their content rather than a loaded_at column.

A model is current when its last successful build (table `dbt_model_builds`) was of the same definition (its SQL,
config and tests, as the manifest checksums them), read sources whose content digests are the same as now, and
its relation still exists. Anything else, and everything downstream of it, is built again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, text

Manifest = Mapping[str, Any]

RECORDED = "SELECT unique_id, definition, source_digests, dagster_run_id FROM dbt_model_builds"
RECORD = """
INSERT INTO dbt_model_builds (unique_id, definition, source_digests, dagster_run_id, built_at)
VALUES (:unique_id, :definition, CAST(:source_digests AS jsonb), :run_id, now())
ON CONFLICT (unique_id) DO UPDATE SET definition = EXCLUDED.definition, source_digests = EXCLUDED.source_digests,
    dagster_run_id = EXCLUDED.dagster_run_id, built_at = EXCLUDED.built_at
"""


@dataclass(frozen=True)
class ModelBuild:
    """A model's last successful build: what it was built from and by which run."""

    definition: str
    source_digests: dict[str, str]
    dagster_run_id: str | None


def parents(manifest: Manifest, unique_id: str) -> list[str]:
    return list(manifest["nodes"].get(unique_id, {}).get("depends_on", {}).get("nodes", []))


def upstream_sources(manifest: Manifest, unique_id: str) -> set[str]:
    """Every source a dbt node reads, directly or through the models it selects from."""
    found: set[str] = set()
    seen: set[str] = set()
    pending = [unique_id]
    while pending:
        for parent in parents(manifest, pending.pop()):
            if parent.startswith("source."):
                found.add(parent)
            elif parent not in seen:
                seen.add(parent)
                pending.append(parent)
    return found


def source_table(manifest: Manifest, source_id: str) -> str:
    source = manifest["sources"][source_id]
    return str(source.get("identifier") or source["name"])


def definition(manifest: Manifest, unique_id: str) -> str:
    """A digest of what dbt would run for a model: its SQL and config, and every test and unit test on it."""
    node = manifest["nodes"][unique_id]
    parts = [node["checksum"]["checksum"], json.dumps(node.get("config", {}), sort_keys=True, default=str)]
    for test_id, test in sorted({**manifest["nodes"], **manifest.get("unit_tests", {})}.items()):
        if test.get("resource_type") in {"test", "unit_test"} and unique_id in test.get("depends_on", {}).get(
            "nodes", []
        ):
            checksum = test.get("checksum")  # a node's is {"name", "checksum"}, a unit test's a plain string
            checksum = checksum.get("checksum") if isinstance(checksum, dict) else checksum
            parts.append(
                f"{test_id}:{checksum}:"
                f"{json.dumps(test.get('test_metadata') or test.get('given'), sort_keys=True, default=str)}"
            )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def recorded_builds(engine: Engine) -> dict[str, ModelBuild]:
    with engine.connect() as conn:
        return {
            row.unique_id: ModelBuild(row.definition, dict(row.source_digests), row.dagster_run_id)
            for row in conn.execute(text(RECORDED))
        }


def existing_relations(engine: Engine, manifest: Manifest, models: Iterable[str]) -> set[str]:
    """The models whose table or view is in the database now (one catalog query)."""
    names = {uid: f'"{manifest["nodes"][uid]["schema"]}"."{manifest["nodes"][uid]["alias"]}"' for uid in models}
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT name FROM unnest(CAST(:names AS text[])) AS name WHERE to_regclass(name) IS NOT NULL"),
            {"names": list(names.values())},
        )
        present = {row.name for row in found}
    return {uid for uid, name in names.items() if name in present}


def stale_models(
    manifest: Manifest,
    models: Iterable[str],
    digests: Mapping[str, str],
    recorded: Mapping[str, ModelBuild],
    existing: set[str],
) -> dict[str, str]:
    """{model: why it must be built} for the models among `models` that are not current (see the module), in
    dependency order; a model downstream of a stale one is stale too."""
    stale: dict[str, str] = {}

    def visit(uid: str) -> str | None:
        if uid in stale:
            return stale[uid]
        reason = _reason(manifest, uid, digests, recorded.get(uid), existing)
        for parent in parents(manifest, uid):
            if reason is None and parent.startswith("model.") and visit(parent) is not None:
                reason = f"upstream {manifest['nodes'][parent]['name']} is rebuilt"
        if reason is not None:
            stale[uid] = reason
        return reason

    for uid in sorted(models):
        visit(uid)
    return stale


def _reason(
    manifest: Manifest, uid: str, digests: Mapping[str, str], build: ModelBuild | None, existing: set[str]
) -> str | None:
    if build is None:
        return "no recorded build"
    if uid not in existing:
        return "relation missing"
    if build.definition != definition(manifest, uid):
        return "definition changed"
    changed = sorted(
        source_table(manifest, s)
        for s in upstream_sources(manifest, uid)
        if build.source_digests.get(source_table(manifest, s)) != digests.get(source_table(manifest, s))
    )
    return f"source changed: {', '.join(changed)}" if changed else None


def record_builds(
    engine: Engine, manifest: Manifest, models: Iterable[str], digests: Mapping[str, str], run_id: str
) -> int:
    """Records that `models` were built from the sources as `digests` describe them (one transaction)."""
    rows = [
        {
            "unique_id": uid,
            "definition": definition(manifest, uid),
            "run_id": run_id,
            "source_digests": json.dumps(
                {source_table(manifest, s): digests[source_table(manifest, s)] for s in upstream_sources(manifest, uid)}
            ),
        }
        for uid in models
    ]
    if rows:
        with engine.begin() as conn:
            conn.execute(text(RECORD), rows)
    return len(rows)
