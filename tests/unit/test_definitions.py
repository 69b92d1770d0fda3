"""Loading the Definitions: what the asset graph means (its exact shape is pinned by test_asset_graph_snapshot),
and every resource comes from the one settings object."""

import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.dependency import NodeHandle

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.defs.automation import apply_nightly_policies
from dagster_project.defs.definitions import build_definitions
from dagster_project.defs.resources import PostgresResource
from dagster_project.sources import registry

SOURCES = list(registry.SOURCES)


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    """The code location, built once for the module's tests (building it loads every asset module, dbt's too)."""
    return build_definitions(FluxSettings())


def test_each_source_flows_raw_then_documents_after_the_schema(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    for source in SOURCES:
        parents = {k.to_user_string() for k in graph.get(dg.AssetKey(f"{source}_documents")).parent_keys}
        # A source kept as releases loads only a release that passed its churn check.
        kept = {f"{source}_release"} if source in {"hgnc", "reactome", "kegg", "clinvar"} else set()
        # ClinVar's genes are placed on the HGNC rows hgnc_documents loads.
        placed_on = {"hgnc_documents"} if source == "clinvar" else set()
        assert parents == {f"{source}_raw", "postgres_schema"} | kept | placed_on
        raw_parents = {k.to_user_string() for k in graph.get(dg.AssetKey(f"{source}_raw")).parent_keys}
        assert raw_parents == {"postgres_schema"}
    index_chain = [("chunks", "chunk_embeddings"), ("chunk_embeddings", "chunk_vector_index")]
    for parent, child in index_chain:
        assert dg.AssetKey(parent) in graph.get(dg.AssetKey(child)).parent_keys
    assert {f"{s}_documents" for s in SOURCES} | {"postgres_schema"} == {
        k.to_user_string() for k in graph.get(dg.AssetKey("chunks")).parent_keys
    }
    blocking = {key.name for key in graph.asset_check_keys if graph.get_check_spec(key).blocking}
    assert {
        "documents_valid",
        "quarantine_rate_ok",
        "gene_identifiers_valid",
        "bm25_index_matches_chunks",
        "candidate_index_is_servable",
        "retrieval_no_regression",
        "answer_no_regression",
        "resolution_no_regression",
        "literature_tools_no_regression",
        "churn_within_limits",
        "disease_associations_valid",
    } <= blocking


def test_serving_reads_an_index_published_only_after_every_part_is_built_and_gated(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    parents = {k.to_user_string() for k in graph.get(dg.AssetKey("candidate_index")).parent_keys}
    assert parents == {
        "chunk_vector_index",
        "chunk_bm25_index",
        "pathway_vectors",
        "pathway_resolution",
        "resolution_release",
    }
    scorecards = {"retrieval_scorecard", "answer_scorecard", "resolution_scorecard", "literature_tools_scorecard"}
    for scorecard in scorecards:
        assert {k.to_user_string() for k in graph.get(dg.AssetKey(scorecard)).parent_keys} == {"candidate_index"}
    published = {k.to_user_string() for k in graph.get(dg.AssetKey("published_index")).parent_keys}
    assert published == scorecards | {"candidate_index"}
    assert {k.to_user_string() for k in graph.get(dg.AssetKey("chunk_bm25_index")).parent_keys} == {"chunks"}


def test_every_asset_has_a_group_and_a_description(defs: dg.Definitions) -> None:
    for spec in defs.resolve_all_asset_specs():
        assert spec.group_name and spec.group_name != "default", spec.key
        assert spec.description and len(spec.description) > 20, spec.key


def test_every_resource_comes_from_the_one_settings_object() -> None:
    settings = FluxSettings(pg_port=54999, pg_database="elsewhere", embedding_batch_size=7)
    resources = build_definitions(settings).resources or {}
    assert set(resources) == {"settings", "postgres", "neo4j", "embedder", "ray", "dbt"}
    assert isinstance(resources["settings"], dg.ResourceDefinition)  # the run's settings: test_run_settings.py
    for name, resource in resources.items():
        if name != "settings":
            assert isinstance(resource, dg.ConfigurableResource), name
    postgres = resources["postgres"]
    assert isinstance(postgres, PostgresResource)
    assert postgres.get_engine().url.render_as_string(hide_password=True).endswith(":54999/elsewhere")
    assert resources["embedder"].batch_size == 7


def test_the_settings_given_are_the_settings_used_and_importing_reads_none() -> None:
    custom = build_definitions(
        FluxSettings(
            snapshot_sensor_interval=45, nightly_cron="30 3 * * 1-5", raw_max_retries=1, automation_interval=15
        )
    )
    sensors = {s.name: s.minimum_interval_seconds for s in custom.sensors or []}
    assert sensors == {"snapshot_changed": 45, "nightly_automation": 15}
    assert [s.cron_schedule for s in custom.schedules or []] == ["30 3 * * 1-5"]
    assert custom.get_assets_def("kegg_raw").op.retry_policy.max_retries == 1  # type: ignore[union-attr]
    # In a fresh interpreter: importing the code location (every asset, check and sensor module) reads no settings.
    probe = (
        "import dagster_project.defs.definitions; from dagster_project.core.settings import get_settings; "
        "print(get_settings.cache_info().currsize)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "0"


def test_nightly_schedule_pulls_exactly_the_raw_assets_at_the_configured_time(defs: dg.Definitions) -> None:
    schedule = next(s for s in defs.schedules if s.name == "nightly_refresh")
    settings = get_settings()
    assert schedule.cron_schedule == settings.ops.nightly_cron == "0 2 * * *"
    assert schedule.execution_timezone == settings.ops.nightly_timezone == "UTC"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    job = defs.resolve_job_def("nightly_raw_pulls")
    selected = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    assert selected == {f"{s}_raw" for s in SOURCES}
    expected = dg.RetryPolicy(
        max_retries=settings.ops.raw_max_retries,
        delay=settings.ops.raw_retry_delay,
        backoff=dg.Backoff.EXPONENTIAL,
        jitter=dg.Jitter.PLUS_MINUS,
    )
    for source in SOURCES:
        # The op-level policy is what a step uses (it shadows any job-level op_retry_policy), in any run.
        assert defs.get_assets_def(f"{source}_raw").op.retry_policy == expected, source
        assert job.get_retry_policy_for_handle(NodeHandle(f"{source}_raw", None)) == expected, source
    sensor = next(s for s in defs.sensors if s.name == "snapshot_changed")
    assert sensor.job_name == "nightly_raw_pulls" and sensor.minimum_interval_seconds == 600


def test_downstream_assets_follow_by_eager_automation_blocked_by_failed_checks(defs: dg.Definitions) -> None:
    from dagster_project.defs.automation import downstream_condition, history_condition

    graph = defs.resolve_asset_graph()
    expected = downstream_condition()
    history = []
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if not node.is_executable:
            continue
        if key.to_user_string().endswith("_raw"):
            assert node.automation_condition is None, key  # scheduled, not automated
        elif node.partitions_def is not None:  # the release history: each partition once, not eagerly
            assert node.automation_condition == history_condition(), key
            history.append(key.to_user_string())
        else:
            assert node.automation_condition == expected, key
    assert sorted(history) == [f"{source}_release_history" for source in ("clinvar", "hgnc", "kegg", "reactome")]
    labels = {child.label for child in expected.children}
    assert labels == {"eager", "all_deps_blocking_checks_passed"}


def test_raw_and_index_assets_have_freshness_policies(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    settings = get_settings()
    for source in SOURCES:
        policy = graph.get(dg.AssetKey(f"{source}_raw")).freshness_policy
        assert policy is not None and policy.fail_window.to_timedelta().total_seconds() == 26 * 3600
    for name in ("chunks", "chunk_embeddings", "chunk_vector_index", "chunk_bm25_index", "published_index"):
        policy = graph.get(dg.AssetKey(name)).freshness_policy
        assert policy is not None
        assert policy.fail_window.to_timedelta().total_seconds() == settings.ops.index_freshness_hours * 3600
    assert graph.get(dg.AssetKey("pathway_equivalences")).freshness_policy is None


def test_nightly_policies_apply_by_selection_and_leave_non_materializable_specs_alone() -> None:
    @dg.asset(group_name="raw")
    def some_raw() -> None: ...

    @dg.asset(deps=[some_raw])
    def downstream() -> None: ...

    policed = apply_nightly_policies(
        dg.Definitions(assets=[some_raw, downstream, dg.AssetSpec("ext")]), FluxSettings(raw_freshness_hours=5)
    )
    graph = policed.resolve_asset_graph()
    raw = graph.get(dg.AssetKey("some_raw"))
    assert raw.automation_condition is None
    assert raw.freshness_policy.fail_window.to_timedelta().total_seconds() == 5 * 3600  # type: ignore[union-attr]
    assert graph.get(dg.AssetKey("downstream")).automation_condition is not None
    assert graph.get(dg.AssetKey("ext")).automation_condition is None


def test_a_raw_step_that_fails_transiently_is_retried_with_the_configured_policy() -> None:
    from dagster_project.defs.assets.raw_pulls import raw_retry_policy

    attempts: list[int] = []

    def flaky(policy: dg.RetryPolicy) -> dg.AssetsDefinition:
        @dg.asset(retry_policy=policy)
        def flaky_raw(context: dg.AssetExecutionContext) -> None:
            attempts.append(context.retry_number)
            if len(attempts) <= 2:
                raise ConnectionError("dropped connection")

        return flaky_raw

    assert dg.materialize([flaky(raw_retry_policy(FluxSettings(raw_max_retries=2, raw_retry_delay=0.0)))]).success
    assert attempts == [0, 1, 2]
    attempts.clear()
    one_retry = flaky(raw_retry_policy(FluxSettings(raw_max_retries=1, raw_retry_delay=0.0)))
    assert not dg.materialize([one_retry], raise_on_error=False).success
    assert attempts == [0, 1]


def test_every_asset_has_an_owning_team_and_layer_and_tier_tags(defs: dg.Definitions) -> None:
    """The catalog filters by owner and tag: a team per group, `layer` and `tier` on every asset, `source` on every
    per-source asset (ownership.py)."""
    for spec in defs.resolve_all_asset_specs():
        assert spec.owners and all(owner.startswith("team:") for owner in spec.owners), spec.key
        assert spec.tags.get("layer") and spec.tags.get("tier") in ("serving", "pipeline"), spec.key
    specs = {spec.key.to_user_string(): spec for spec in defs.resolve_all_asset_specs()}
    assert specs["clinvar_documents"].tags["source"] == "clinvar" and specs["reactome_raw"].tags["source"] == "reactome"
    assert "source" not in specs["knowledge_graph"].tags
    assert specs["published_index"].tags["tier"] == "serving" and specs["kegg_raw"].tags["tier"] == "pipeline"


def test_python_assets_point_at_the_file_and_line_that_define_them(defs: dg.Definitions) -> None:
    """ "Open source" in the UI: each Python-defined asset's code reference names a file of this checkout and a line
    where its function is defined (dbt models keep dagster-dbt's own references)."""
    checked = 0
    for spec in defs.resolve_all_asset_specs():
        refs = spec.metadata.get("dagster/code_references")
        if "dbt" in spec.kinds:
            continue
        assert refs is not None, spec.key
        for ref in refs.code_references:
            lines = Path(ref.file_path).read_text().splitlines()
            assert "def " in lines[ref.line_number - 1] or "@" in lines[ref.line_number - 1], (spec.key, ref)
            checked += 1
    assert checked >= 25


def test_descriptions_render_in_the_ui_without_eating_placeholders(defs: dg.Definitions) -> None:
    """Dagster renders descriptions as Markdown: `<source>` outside code would be swallowed as an HTML tag and
    `{source}_{id}` garbled, so placeholders sit in backticks."""
    graph = defs.resolve_asset_graph()
    texts = [(spec.key.to_user_string(), spec.description or "") for spec in defs.resolve_all_asset_specs()]
    texts += [(key.name, graph.get_check_spec(key).description or "") for key in graph.asset_check_keys]
    for name, text in texts:
        outside_code = re.sub(r"`[^`]*`", "", text)
        assert not re.search(r"<[A-Za-z][^>]*>|\{[A-Za-z_]+\}", outside_code), (name, text)
