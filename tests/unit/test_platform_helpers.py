from pathlib import Path

import dagster as dg
import pandas as pd

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.checks.gx import gx_check_result
from dagster_project.defs.resources.ray import ray_temp_dir
from dagster_project.ops.instance import dagster_yaml


def test_dagster_storage_uses_postgres_with_the_psycopg2_scheme() -> None:
    conf = dagster_yaml(FluxSettings(pg_port=6100, dagster_database="dg"))["storage"]["postgres"]["postgres_db"]
    assert conf["scheme"] == "postgresql+psycopg2"
    assert (conf["port"], conf["db_name"], conf["hostname"]) == (6100, "dg", "127.0.0.1")


def test_ray_temp_dir_stays_under_flux_home_only_when_short_enough(tmp_path: Path) -> None:
    short = Path("/tmp/fx")
    assert ray_temp_dir(short) == str(short)
    long = tmp_path / ("deep" * 20) / "ray"
    chosen = ray_temp_dir(long)
    assert chosen != str(long) and len(chosen) <= 40
    assert chosen == ray_temp_dir(long), "the fallback must be stable for one FLUX_HOME"


def test_gx_helper_fails_the_check_and_names_the_broken_expectation() -> None:
    import great_expectations.expectations as gxe

    expectations = [
        gxe.ExpectColumnValuesToNotBeNull(column="checksum"),
        gxe.ExpectColumnValuesToBeUnique(column="version"),
    ]
    good = gx_check_result(pd.DataFrame({"version": [1, 2], "checksum": ["a", "b"]}), expectations, "good")
    assert good.passed
    bad = gx_check_result(pd.DataFrame({"version": [1, 1], "checksum": ["a", None]}), expectations, "bad")
    assert not bad.passed
    assert bad.severity == dg.AssetCheckSeverity.ERROR
    failed = bad.metadata["failed_expectations"].value
    assert "expect_column_values_to_not_be_null(checksum)" in failed
    assert "expect_column_values_to_be_unique(version)" in failed
