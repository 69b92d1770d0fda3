"""What a run carries from its command's settings, what it cannot, and what the worker's `settings` resource reads:
pure logic over FluxSettings objects, and one in-process run for the resource (an ephemeral instance, no stack)."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from dagster_project.core.run_settings import (
    SETTING_TAG_PREFIX,
    StackSettingsMismatch,
    check_stack_settings,
    location_settings,
    setting_tags,
    settings_for_run,
    stack_mismatches,
)
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.resources.settings import FluxSettingsParam, run_settings_resource

# Servers derived from their ports, whatever the environment of the test run names.
SERVERS = {"database_url": None, "neo4j_uri": None, "redis_url": None, "llm_api_key": None}
LOCATION = FluxSettings(pg_password="location-secret", neo4j_password="graph-secret", **SERVERS)


def test_only_the_run_settings_that_differ_from_the_location_travel() -> None:
    command = LOCATION.evolve(source_mode="snapshot", churn_max_genes_lost=0.5, hnsw_m=8)
    assert setting_tags(command, location_settings(LOCATION)) == {
        SETTING_TAG_PREFIX + "FLUX_SOURCE_MODE": '"snapshot"',
        SETTING_TAG_PREFIX + "FLUX_CHURN_MAX_GENES_LOST": "0.5",
        SETTING_TAG_PREFIX + "FLUX_HNSW_M": "8",
    }
    assert setting_tags(LOCATION, location_settings(LOCATION)) == {}


def test_a_run_reads_the_values_its_tags_carry_and_the_location_s_for_the_rest() -> None:
    command = FluxSettings(
        **SERVERS,
        pg_password="location-secret",
        neo4j_password="graph-secret",
        source_mode="snapshot",
        raw_root="/data/raw",
        tuning_preset="thorough",  # as FLUX_TUNING_PRESET sets it: the preset's values for what is not given
    )
    run = settings_for_run(LOCATION, setting_tags(command, location_settings(LOCATION)))
    assert run.sources.source_mode == "snapshot" and run.raw_root_path == "/data/raw"
    # The preset's values were resolved by the command and travel with it, not re-read by the worker.
    assert run.tuning_preset == "thorough" and run.retrieval.dense_top_k == command.retrieval.dense_top_k != 20
    assert run.platform_database_url == LOCATION.platform_database_url
    assert settings_for_run(LOCATION, {"flux/trigger": "cli"}) is LOCATION


def test_optional_and_path_settings_round_trip_through_their_tags() -> None:
    location = LOCATION.evolve(raw_root="/srv/raw", live_max_pathways=5)
    command = location.evolve(raw_root=None, live_max_pathways=None, snapshot_dir="/elsewhere")
    run = settings_for_run(location, setting_tags(command, location_settings(location)))
    assert run.sources.raw_root is None and run.sources.live_max_pathways is None
    assert str(run.sources.snapshot_dir) == "/elsewhere"


@pytest.mark.parametrize(
    "tag",
    [
        "FLUX_PG_PORT",  # a connection: the location's resources hold it
        "FLUX_LLM_API_KEY",  # a secret never travels
        "FLUX_NO_SUCH_SETTING",
        "SOURCE_MODE",  # not a FLUX_ variable name
    ],
)
def test_a_tag_naming_a_setting_that_cannot_travel_is_an_error_not_ignored(tag: str) -> None:
    with pytest.raises(ValueError, match="names no setting a run can carry"):
        settings_for_run(LOCATION, {SETTING_TAG_PREFIX + tag: json.dumps("1")})


def test_secrets_and_passwords_are_published_only_by_fingerprint() -> None:
    published = json.dumps(location_settings(LOCATION.evolve(llm_api_key="sk-very-secret")))
    for secret in ("location-secret", "graph-secret", "sk-very-secret"):
        assert secret not in published
    command = LOCATION.evolve(llm_api_key="sk-other", source_mode="snapshot")
    assert not any("sk-other" in value for value in setting_tags(command, location_settings(LOCATION)).values())


def test_a_command_that_names_other_connections_or_secrets_is_refused_naming_each() -> None:
    published = location_settings(LOCATION)
    command = LOCATION.evolve(pg_port=54000, llm_api_key="sk-1", embedding_model="other-model")
    lines = stack_mismatches(command, published)
    variables = {line.split(" ", 1)[0] for line in lines}
    assert {"FLUX_DATABASE_URL", "FLUX_LLM_API_KEY", "FLUX_EMBEDDING_MODEL"} <= variables
    port = LOCATION.postgres.pg_port
    assert any(":54000/" in line and f":{port}/" in line for line in lines)  # both values, password hidden
    assert not any("location-secret" in line or "sk-1" in line for line in lines)
    with pytest.raises(StackSettingsMismatch, match="make down && make up"):
        check_stack_settings(command, published)


def test_the_same_server_named_by_url_or_by_port_is_not_a_mismatch() -> None:
    # What `eval "$(flux env)"` exports names the embedded server the location derived from its port.
    command = LOCATION.evolve(database_url=LOCATION.platform_database_url, neo4j_uri=LOCATION.resolved_neo4j_uri)
    assert stack_mismatches(command, location_settings(LOCATION)) == []


def test_settings_no_run_reads_are_neither_carried_nor_checked() -> None:
    command = LOCATION.evolve(serve_port=8123, nightly_cron="5 3 * * *", neo4j_heap="2g")
    published = location_settings(LOCATION)
    assert setting_tags(command, published) == {} and stack_mismatches(command, published) == []


def test_the_settings_resource_applies_the_run_s_tags_inside_a_run() -> None:
    seen: dict[str, FluxSettings] = {}

    @dg.asset
    def reads_settings(settings: FluxSettingsParam) -> None:
        seen["settings"] = settings

    resources = {"settings": run_settings_resource(LOCATION)}
    tags = setting_tags(LOCATION.evolve(source_mode="snapshot"), location_settings(LOCATION))
    assert dg.materialize([reads_settings], resources=resources, tags=tags).success
    assert seen["settings"].sources.source_mode == "snapshot"
    assert dg.materialize([reads_settings], resources=resources).success
    assert seen["settings"] is LOCATION
