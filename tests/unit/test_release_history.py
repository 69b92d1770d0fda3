"""The release history's partitions: the raw zone's releases in the order they were first pulled (real files in a
temporary raw zone), the release each is compared with, a key the raw zone no longer holds, the selection rules
for partitioned runs, and the automation condition that records each new release once (Dagster's own evaluator)."""

from pathlib import Path

import dagster as dg
import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.automation import apply_nightly_policies
from dagster_project.defs.definitions import build_definitions
from dagster_project.defs.materialize import SelectionError, selected_keys
from dagster_project.releases.history import ReleaseNotInRawZoneError, locate, partition_key, raw_releases
from dagster_project.sources.raw import RawPull, write_pull


def _pull(root: Path, body: bytes, at: str, release: str = "R1") -> None:
    write_pull(RawPull("hgnc", {"hgnc_complete_set.txt": body}, release=release, retrieved_at=at), str(root))


def test_releases_are_ordered_by_first_pull_and_compared_with_the_one_before(tmp_path: Path) -> None:
    _pull(tmp_path, b"a", "2026-01-01T02:00:00+00:00")
    _pull(tmp_path, b"b", "2026-02-01T02:00:00+00:00", release="R2")
    _pull(tmp_path, b"a", "2026-03-01T02:00:00+00:00")  # the first files again: still the first release
    releases = raw_releases("hgnc", str(tmp_path))
    assert [(r.manifest.release, r.pulls, r.first_pulled[:10]) for r in releases] == [
        ("R1", 2, "2026-01-01"),
        ("R2", 1, "2026-02-01"),
    ]
    first, second = releases
    assert first.key.startswith("R1 #") and first.key != second.key
    assert first.manifest.retrieved_at.startswith("2026-03-01"), "the latest pull of the release is read"
    assert locate("hgnc", second.partition, str(tmp_path)) == (second, first)
    assert locate("hgnc", first.partition, str(tmp_path)) == (first, None)
    with pytest.raises(ReleaseNotInRawZoneError, match="no longer in the raw zone") as gone:
        locate("hgnc", "R0 #00000000", str(tmp_path))
    assert repr(first.partition) in str(gone.value) and "FLUX_RAW_ROOT" in str(gone.value)
    assert raw_releases("kegg", str(tmp_path)) == []


def test_partition_keys_hold_no_character_dagster_refuses() -> None:
    assert partition_key("HGNC [2024-01], monthly #ab12cd34") == "HGNC  2024-01   monthly #ab12cd34"


def test_a_run_holds_one_partitioning() -> None:
    graph = build_definitions(FluxSettings()).resolve_asset_graph()
    everything = selected_keys(graph, "*")
    assert everything and not any(k.to_user_string().endswith("_release_history") for k in everything), (
        "a run without a partition leaves the release history out"
    )
    assert selected_keys(graph, "key:kegg_release_history", partition="R #1") == {dg.AssetKey("kegg_release_history")}
    with pytest.raises(SelectionError, match="name one release with --partition"):
        selected_keys(graph, "key:kegg_release_history")
    with pytest.raises(SelectionError, match="partitioned assets only"):
        selected_keys(graph, "key:kegg_release_history or key:kegg_release", partition="R #1")
    with pytest.raises(SelectionError, match="different sources"):
        selected_keys(graph, "key:kegg_release_history or key:hgnc_release_history", partition="R #1")


history_partitions = dg.DynamicPartitionsDefinition(name="example_releases")


@dg.asset(partitions_def=history_partitions, tags={"history": "release"})
def example_release_history(context: dg.AssetExecutionContext) -> None:
    if context.partition_key.startswith("gone"):
        raise dg.Failure("not in the raw zone", allow_retries=False)


HISTORY_DEFS = apply_nightly_policies(dg.Definitions(assets=[example_release_history]), FluxSettings())


def _requested(instance: dg.DagsterInstance, cursor: object) -> tuple[set[str], object]:
    result = dg.evaluate_automation_conditions(defs=HISTORY_DEFS, instance=instance, cursor=cursor)
    subset = next((r.true_subset for r in result.results if r.key == example_release_history.key), None)
    keys = set(subset.expensively_compute_partition_keys()) if subset is not None else set()
    return keys, result.cursor


def test_each_new_release_partition_is_requested_once_and_a_failed_one_is_not_retried() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("example_releases", ["R1 #a", "gone #b"])
        keys, cursor = _requested(instance, None)
        assert keys == {"R1 #a", "gone #b"}
        for key in sorted(keys):
            dg.materialize([example_release_history], instance=instance, partition_key=key, raise_on_error=False)
        keys, cursor = _requested(instance, cursor)
        assert keys == set(), "recorded, or failed for good: neither is requested again"
        instance.add_dynamic_partitions("example_releases", ["R2 #c"])
        keys, _ = _requested(instance, cursor)
        assert keys == {"R2 #c"}
