"""The raw group's freshness policy as the daemon evaluates it (Dagster's FreshnessDaemon, the state the UI shows as
"Freshness"): a pull materialized now passes; the same pull looked at after FLUX_RAW_FRESHNESS_HOURS fails. Runs
on a real (temporary) Dagster instance."""

from __future__ import annotations

import time
from datetime import timedelta

import dagster as dg
from dagster._core.definitions.freshness import FreshnessState
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import InProcessTestWorkspaceLoadTarget, freeze_time
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._daemon.freshness import FreshnessDaemon

from dagster_project.core.settings import get_settings
from tests.support import freshness_defs

KEY = dg.AssetKey("example_raw")


def _evaluate(context: WorkspaceProcessContext, instance: dg.DagsterInstance) -> FreshnessState:
    for _ in FreshnessDaemon().run_iteration(context):
        pass
    return instance.get_freshness_state_records([KEY])[KEY].freshness_state


def test_a_raw_pull_is_fresh_within_its_window_and_fails_after_it() -> None:
    window = timedelta(hours=get_settings().ops.raw_freshness_hours)
    origin = InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name=freshness_defs.__name__, attribute="defs"))
    with (
        dg.instance_for_test() as instance,
        WorkspaceProcessContext(instance, InProcessTestWorkspaceLoadTarget(origin)) as context,
    ):
        assert dg.materialize([freshness_defs.example_raw], instance=instance).success
        assert _evaluate(context, instance) is FreshnessState.PASS
        with freeze_time(time.time() + window.total_seconds() - 600):
            assert _evaluate(context, instance) is FreshnessState.PASS, "still inside the window"
        with freeze_time(time.time() + window.total_seconds() + 600):
            assert _evaluate(context, instance) is FreshnessState.FAIL, "older than the window"
