"""`flux` commands against the real stack, on small database states (no demo materialization): an unmigrated
database, a migrated one with nothing built, one index version, and a backup of that small state. Each bad input
or impossible request ends with an exact exit code and one message naming the problem, never a traceback, and
leaves the state as it was.

The CLI runs in-process through `dagster_project.cli.main.main` (the console script's entry point), with the session's
FLUX_ settings plus the overrides a test gives, and stdin/stdout/stderr isolated by Click's CliRunner."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import psycopg
import pytest
from psycopg import sql
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.defs.lineage import LINEAGE_KEY, Lineage, recorded_lineage
from dagster_project.ops.instance import render_dagster_home
from dagster_project.stack.postgres import admin_conninfo, ensure_databases
from tests.support.cli import flux


def _drop_databases(settings: FluxSettings, *names: str) -> None:
    engine_for.cache_clear()  # pooled connections would block DROP DATABASE
    with psycopg.connect(admin_conninfo(settings), autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _rows(settings: FluxSettings, query: str) -> list[tuple[object, ...]]:
    with engine_for(settings.platform_database_url).connect() as conn:
        return [tuple(r) for r in conn.execute(text(query))]


@pytest.fixture(scope="module")
def unmigrated(stack: FluxSettings) -> Iterator[dict[str, str]]:
    """A platform database that exists (as after `flux stack up`) but holds no table yet."""
    name = f"{stack.postgres.pg_database}_cli_empty"
    ensure_databases(stack.evolve(pg_database=name))
    yield {"FLUX_PG_DATABASE": name}
    _drop_databases(stack, name)


@pytest.fixture(scope="module")
def migrated(stack: FluxSettings) -> FluxSettings:
    """The session's platform database with the schema and nothing built (`flux migrate`)."""
    result = flux("migrate")
    assert result.code == 0, result.stderr
    assert "postgres: version" in result.printed and "neo4j: version" in result.printed
    return stack


VERSIONS = "SELECT version, published_at, rolled_back_at, dropped_at FROM index_versions ORDER BY version"


@pytest.fixture
def index_rows(migrated: FluxSettings) -> Iterator[FluxSettings]:
    """index_versions rows a test inserts are deleted after it."""
    yield migrated
    with engine_for(migrated.platform_database_url).begin() as conn:
        conn.execute(text("DELETE FROM index_versions WHERE version LIKE 'cli-test-%'"))


def _insert_version(settings: FluxSettings, version: str, published: bool) -> None:
    with engine_for(settings.platform_database_url).begin() as conn:
        conn.execute(
            text(
                "INSERT INTO index_versions (version, bm25_version, bm25_path, embedding_model, chunk_count,"
                " vector_count, pathway_count, dataset_version, pipeline_version, dagster_run_id, published_at,"
                " chunk_table) VALUES (:v, 'bm25-x', '/nonexistent/bm25', 'model-x', 3, 3, 1, 'ds-1', 'pl-1',"
                " 'run01234567', CASE WHEN :p THEN now() END, 'chunks_cli_test')"
            ),
            {"v": version, "p": published},
        )


# --- an unmigrated database ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "table"),
    [
        (["index", "list"], "index_versions"),
        (["index", "rollback"], "index_versions"),
        (["evals", "show"], "eval_runs"),
        (["evals", "accept"], "eval_runs"),
    ],
    ids=lambda value: "-".join(value) if isinstance(value, list) else value,
)
def test_a_command_on_an_unmigrated_database_says_in_one_line_to_migrate(
    unmigrated: dict[str, str], args: list[str], table: str
) -> None:
    result = flux(*args, env=unmigrated)
    assert result.code == 2
    assert result.stderr.strip() == (
        f'flux: error: relation "{table}" does not exist in the platform database {unmigrated["FLUX_PG_DATABASE"]}:'
        " run `flux migrate` (or `flux materialize`) first (check FLUX_PG_DATABASE)"
    )


# --- flux index ----------------------------------------------------------------------------------------------


def test_index_list_on_a_migrated_database_shows_an_empty_table(migrated: FluxSettings) -> None:
    result = flux("index", "list")
    assert result.code == 0 and result.stderr == ""
    assert "version" in result.printed and "state" in result.printed
    assert "cli-test" not in result.printed and "serving" not in result.printed


def test_index_rollback_with_only_a_candidate_exits_1_and_changes_nothing(index_rows: FluxSettings) -> None:
    _insert_version(index_rows, "cli-test-v1", published=False)
    before = _rows(index_rows, VERSIONS)
    result = flux("index", "rollback")
    assert result.code == 1
    assert result.stderr == "flux: no published index version to roll back\n"
    assert result.stdout == ""
    assert _rows(index_rows, VERSIONS) == before
    listed = flux("index", "list", "--limit", "5")
    assert listed.code == 0
    assert re.search(r"cli-test-v1\s*│\s*candidate", listed.stdout), listed.stdout


def test_index_rollback_of_the_only_published_version_exits_1_and_keeps_it_serving(index_rows: FluxSettings) -> None:
    _insert_version(index_rows, "cli-test-v1", published=True)
    before = _rows(index_rows, VERSIONS)
    result = flux("index", "rollback")
    assert result.code == 1
    assert result.stderr == (
        "flux: index cli-test-v1 is the only published version still kept; there is nothing to roll back to\n"
    )
    assert _rows(index_rows, VERSIONS) == before
    listed = flux("index", "list")
    assert listed.code == 0
    assert re.search(r"cli-test-v1\s*│\s*serving", listed.stdout), listed.stdout


# --- flux evals ----------------------------------------------------------------------------------------------


def test_evals_show_with_nothing_evaluated_says_so_for_each_scorecard(migrated: FluxSettings) -> None:
    result = flux("evals", "show")
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.splitlines() == [
        f"{s}: no scorecard yet (materialize group:evals)"
        for s in ("retrieval", "answer", "resolution", "literature_tools")
    ]


@pytest.mark.parametrize("args", [[], ["--scorecard", "retrieval"]], ids=["all", "one"])
def test_evals_accept_with_nothing_evaluated_exits_1_and_accepts_nothing(
    migrated: FluxSettings, args: list[str]
) -> None:
    result = flux("evals", "accept", *args)
    assert result.code == 1
    assert result.stderr == "flux: nothing to accept: no scorecard has been materialized yet\n"
    assert result.stdout == ""
    assert _rows(migrated, "SELECT count(*) FROM eval_runs") == [(0,)]


def test_evals_accept_of_an_unknown_scorecard_is_a_usage_error(migrated: FluxSettings) -> None:
    result = flux("evals", "accept", "--scorecard", "bogus")
    assert result.code == 2
    assert "Invalid value for --scorecard: one of retrieval, answer, resolution" in result.said


# --- flux resolution fit -------------------------------------------------------------------------------------


def test_resolution_fit_with_a_missing_curation_file_names_it_and_writes_nothing(
    migrated: FluxSettings, tmp_path: Path
) -> None:
    from dagster_project.resolution.model import MODEL_PATH

    shipped = MODEL_PATH.read_bytes()
    missing, output = tmp_path / "curation.tsv", tmp_path / "model.json"
    result = flux("resolution", "fit", "--output", str(output), env={"FLUX_RESOLUTION_CURATION": str(missing)})
    assert result.code == 2
    assert result.stderr == f"flux: error: no curation file at {missing} (check FLUX_RESOLUTION_CURATION)\n"
    assert not output.exists()
    assert MODEL_PATH.read_bytes() == shipped


# --- flux materialize --select -------------------------------------------------------------------------------


def _run_count(settings: FluxSettings) -> int:
    with dg.DagsterInstance.from_config(render_dagster_home(settings)) as instance:
        return instance.get_runs_count()


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (
            "group:nope",
            "'group:nope' selects no asset (groups: dbt, evals, graph, index, platform, raw, releases,"
            " serving, sources, tables)",
        ),
        (
            "bogus_asset",
            "'bogus_asset' is not a valid asset selection: AssetKey(s) ['bogus_asset'] were selected,"
            " but no AssetsDefinition objects supply these keys",
        ),
        ("key:a+++", "'key:a+++' is not a valid asset selection: Invalid selection string: key:a+++"),
    ],
)
def test_materialize_of_an_unknown_selection_is_rejected_and_runs_nothing(
    migrated: FluxSettings, selection: str, message: str
) -> None:
    runs = _run_count(migrated)
    result = flux("materialize", "--select", selection)
    assert result.code == 2
    assert f"Invalid value for --select: {message}" in result.said, result.said
    assert result.stdout == ""
    assert _run_count(migrated) == runs


def test_materialize_from_another_mode_or_raw_root_is_refused_until_it_claims_the_lineage(
    migrated: FluxSettings, tmp_path: Path
) -> None:
    """The instance records the lineage (source mode, raw root) that its first `flux materialize`'s raw pulls read;
    a run with others is refused in one message naming both and creates no run; `--new-lineage` makes what that
    run pulls the instance's lineage, and a run that pulls nothing changes no lineage."""
    guard = {"FLUX_LINEAGE_GUARD": "true"}
    other = guard | {"FLUX_RAW_ROOT": str(tmp_path / "other-raw")}
    pull = "key:postgres_schema or key:kegg_raw"
    with dg.DagsterInstance.from_config(render_dagster_home(migrated)) as instance:
        saved = instance.run_storage.get_cursor_values({LINEAGE_KEY}).get(LINEAGE_KEY, "")
        instance.run_storage.set_cursor_values({LINEAGE_KEY: ""})

    def held() -> Lineage | None:
        with dg.DagsterInstance.from_config(render_dagster_home(migrated)) as instance:
            return recorded_lineage(instance)

    try:
        assert flux("materialize", "--select", "group:platform", "--in-process", env=guard).code == 0
        assert held() is None, "a run that pulled nothing records no lineage"
        first = flux("materialize", "--select", pull, "--in-process", env=guard)
        assert first.code == 0, first.said
        assert held() == Lineage("demo", migrated.raw_root_path)

        runs = _run_count(migrated)
        live = guard | {"FLUX_SOURCE_MODE": "live", "FLUX_RAW_ROOT": other["FLUX_RAW_ROOT"]}
        for env, wanted in ((other, "demo"), (live, "live")):
            refused = flux("materialize", "--select", pull, env=env)
            assert refused.code == 2 and refused.stdout == ""
            assert f"holds the lineage of demo pulls under {migrated.raw_root_path}" in refused.said
            assert f"would read {wanted} pulls under {other['FLUX_RAW_ROOT']}" in refused.said
            assert "FLUX_HOME of its own" in refused.said and "--new-lineage" in refused.said
        assert _run_count(migrated) == runs, "a refused run is never created"

        nothing = flux("materialize", "--select", "group:platform", "--in-process", "--new-lineage", env=other)
        assert nothing.code == 0 and held() == Lineage("demo", migrated.raw_root_path), nothing.said
        claimed = flux("materialize", "--select", pull, "--in-process", "--new-lineage", env=other)
        assert claimed.code == 0, claimed.said
        assert held() == Lineage("demo", other["FLUX_RAW_ROOT"])
        assert flux("materialize", "--select", pull, "--in-process", env=guard).code == 2
    finally:
        with dg.DagsterInstance.from_config(render_dagster_home(migrated)) as instance:
            instance.run_storage.set_cursor_values({LINEAGE_KEY: saved})


# --- flux chat -----------------------------------------------------------------------------------------------


@pytest.mark.timeout(600)
def test_chat_without_a_published_index_says_so_in_one_line(migrated: FluxSettings) -> None:
    result = flux("chat", stdin="What does TP53 do in apoptosis?\n")
    assert result.code == 2
    assert result.flux_lines == [
        "flux: error: no published retrieval index: no index version has passed its eval gates and been published"
        " yet; run `make run` or materialize `published_index` (flux materialize); `flux index list` shows what"
        " this database holds"
    ], result.stderr
    assert result.stdout.startswith("you> ")
    assert _rows(migrated, "SELECT count(*) FROM answers") == [(0,)]


# --- flux backup / flux restore ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def backup_dir(migrated: FluxSettings, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real backup (`flux backup`) of the migrated, empty platform."""
    target = tmp_path_factory.mktemp("cli-backup") / "backup"
    result = flux("backup", str(target))
    assert result.code == 0, result.stderr
    assert result.printed.startswith(f"backup written to {target}: databases dagster, mlflow, platform; ")
    assert {p.name for p in target.iterdir()} == {"platform.dump", "dagster.dump", "mlflow.dump", "manifest.json"}
    return target


@pytest.fixture
def fresh_databases(stack: FluxSettings) -> Iterator[dict[str, str]]:
    """New platform, Dagster and MLflow database names (created by the restore), dropped afterwards."""
    suffix = uuid.uuid4().hex[:8]
    env = {
        "FLUX_PG_DATABASE": f"flux_cli_restore_{suffix}",
        "FLUX_DAGSTER_DATABASE": f"flux_cli_dagster_{suffix}",
        "FLUX_MLFLOW_DATABASE": f"flux_cli_mlflow_{suffix}",
    }
    yield env
    _drop_databases(stack, *env.values())
    render_dagster_home(stack)  # the restore pointed DAGSTER_HOME at its own Dagster database


def _copy(backup: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "backup"
    shutil.copytree(backup, copy)
    return copy


def test_backup_into_a_non_empty_directory_exits_1_and_overwrites_nothing(backup_dir: Path) -> None:
    before = {p.name: p.read_bytes() for p in backup_dir.iterdir()}
    result = flux("backup", str(backup_dir))
    assert result.code == 1
    assert result.stderr == f"flux: {backup_dir} is not empty; a backup never overwrites another\n"
    assert {p.name: p.read_bytes() for p in backup_dir.iterdir()} == before


def test_restore_from_a_directory_without_a_manifest_exits_1(
    migrated: FluxSettings, tmp_path: Path, fresh_databases: dict[str, str]
) -> None:
    (tmp_path / "platform.dump").write_bytes(b"PGDMP")
    result = flux("restore", str(tmp_path), env=fresh_databases)
    assert result.code == 1
    assert result.stderr == f"flux: {tmp_path} is not a Flux backup (no manifest.json)\n"


def test_restore_into_a_database_that_holds_tables_exits_1_and_changes_nothing(
    migrated: FluxSettings, backup_dir: Path
) -> None:
    tables = (
        "SELECT table_schema, table_name FROM information_schema.tables"
        " WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"
    )
    before = _rows(migrated, tables)
    result = flux("restore", str(backup_dir))
    assert result.code == 1
    assert result.stderr == (
        f"flux: the database {migrated.postgres.pg_database} already holds {len(before)} tables; restore goes into"
        " an empty one (set FLUX_PG_DATABASE to a new name, or drop it first)\n"
    )
    assert _rows(migrated, tables) == before


@pytest.mark.timeout(600)
def test_restore_of_a_backup_with_a_tampered_dump_exits_1_naming_the_failure(
    backup_dir: Path, tmp_path: Path, fresh_databases: dict[str, str]
) -> None:
    tampered = _copy(backup_dir, tmp_path)
    dump = bytearray((tampered / "platform.dump").read_bytes())
    at = dump.find(b"CREATE TABLE public.")
    assert at > 0
    dump[at + 7] ^= 0x01  # one byte: CREATE TABLE -> CREATE UABLE
    (tampered / "platform.dump").write_bytes(bytes(dump))
    result = flux("restore", str(tampered), env=fresh_databases)
    assert result.code == 1
    assert result.stderr == (
        "flux: pg_restore of the platform database failed: pg_restore: error: could not"
        ' execute query: ERROR:  syntax error at or near "UABLE"\n'
    )
    assert "restored" not in result.stdout
