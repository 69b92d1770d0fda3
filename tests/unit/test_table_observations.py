"""The platform tables' observations: row count from the digest, changed or not since the last observation, and when
they last changed (carried over while the digest stays), read back from a real (ephemeral) instance."""

import dagster as dg

from dagster_project.defs.table_observations import table_key, table_observations


def _observe(instance: dg.DagsterInstance, digest: str, now: float) -> dict[str, object]:
    (observation,) = table_observations(instance, {"gene_identifiers": digest}, now)
    instance.report_runless_asset_event(observation)
    assert observation.asset_key == table_key("gene_identifiers") == dg.AssetKey(["postgres", "gene_identifiers"])
    return {key: value.value for key, value in observation.metadata.items()}


def test_a_table_is_changed_only_when_its_digest_is_and_keeps_when_it_last_changed() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        first = _observe(instance, "42:aaaa", now=1000.0)
        assert first == {"dagster/row_count": 42, "digest": "42:aaaa", "changed": True, "last_changed": 1000.0}
        same = _observe(instance, "42:aaaa", now=2000.0)
        assert (same["changed"], same["last_changed"]) == (False, 1000.0)
        edited = _observe(instance, "42:bbbb", now=3000.0)  # a row edited: same count, another digest
        assert (edited["changed"], edited["last_changed"], edited["dagster/row_count"]) == (True, 3000.0, 42)
        grown = _observe(instance, "43:cccc", now=4000.0)
        assert (grown["changed"], grown["dagster/row_count"]) == (True, 43)
