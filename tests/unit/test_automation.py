"""Automation carries a raw pull downstream only when it brought a new data version: a night whose pulls found
nothing new stops after the pulls. Evaluated with Dagster's own automation evaluator on a three-asset chain
that gets Flux's policies."""

from __future__ import annotations

import dagster as dg

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.assets.raw_pulls import RAW_GROUP
from dagster_project.defs.automation import apply_nightly_policies

pulled_version = {"value": "reactome:R85@2026-11-30T02:00:00+00:00"}


@dg.asset(group_name=RAW_GROUP)
def example_raw() -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion(pulled_version["value"]))


@dg.asset(deps=[example_raw])
def example_documents() -> None: ...


@dg.asset(deps=[example_documents])
def example_index() -> None: ...


DEFS = apply_nightly_policies(dg.Definitions(assets=[example_raw, example_documents, example_index]), FluxSettings())


def requested(instance: dg.DagsterInstance, cursor: object) -> tuple[set[str], object]:
    result = dg.evaluate_automation_conditions(defs=DEFS, instance=instance, cursor=cursor)
    chain = ("example_raw", "example_documents", "example_index")
    return {name for name in chain if result.get_num_requested(dg.AssetKey(name))}, result.cursor


def test_only_a_new_raw_data_version_flows_downstream() -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        assert dg.materialize([example_raw, example_documents, example_index], instance=instance).success
        keys, cursor = requested(instance, None)  # the first evaluation only sets the baseline
        assert keys == set()

        assert dg.materialize([example_raw], instance=instance).success  # the same files again
        keys, cursor = requested(instance, cursor)
        assert keys == set(), "a pull that found nothing new must not rebuild downstream"

        pulled_version["value"] = "reactome:R86@2026-12-01T02:00:00+00:00"
        assert dg.materialize([example_raw], instance=instance).success
        keys, cursor = requested(instance, cursor)
        assert keys == {"example_documents", "example_index"}

        keys, _ = requested(instance, cursor)  # handled: not requested again on the next tick
        assert keys == set()
