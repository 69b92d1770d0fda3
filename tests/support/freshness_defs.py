"""A code location of one raw-group asset under Flux's nightly policies (automation.py), for the freshness test:
the policy it gets is the one every raw pull gets."""

import dagster as dg

from dagster_project.core.settings import get_settings
from dagster_project.defs.assets.raw_pulls import RAW_GROUP
from dagster_project.defs.automation import apply_nightly_policies


@dg.asset(group_name=RAW_GROUP)
def example_raw() -> None:
    """Stands for a raw pull: the policy is applied by group, not by name."""


defs = apply_nightly_policies(dg.Definitions(assets=[example_raw]), get_settings())
