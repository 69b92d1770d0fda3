import pytest
from sqlalchemy.engine import make_url

from dagster_project.core.settings import FluxConfigError, FluxSettings


def settings(**overrides: object) -> FluxSettings:
    return FluxSettings(**overrides)  # type: ignore[arg-type]


def test_embedded_urls_follow_ports_and_name_their_driver() -> None:
    s = settings(pg_port=6001, neo4j_bolt_port=6002, redis_port=6003, pg_password="pw")
    assert s.platform_database_url == "postgresql+psycopg://flux:pw@127.0.0.1:6001/flux"
    dagster = make_url(s.dagster_database_url)
    assert (dagster.drivername, dagster.database, dagster.port) == ("postgresql+psycopg2", "flux_dagster", 6001)
    assert make_url(s.resolved_mlflow_tracking_uri).database == "flux_mlflow"
    assert s.resolved_neo4j_uri == "bolt://127.0.0.1:6002"
    assert s.resolved_redis_url == "redis://127.0.0.1:6003/0"
    assert not (s.postgres_external or s.neo4j_external or s.redis_external)


def test_user_urls_are_external_and_sibling_databases_share_their_server() -> None:
    s = settings(
        database_url="postgresql://me:secret@db.internal:5432/warehouse",
        neo4j_uri="neo4j://graph:7687",
        redis_url="redis://cache:6379/2",
    )
    assert s.postgres_external and s.neo4j_external and s.redis_external
    assert s.platform_database_url.startswith("postgresql+psycopg://me:secret@db.internal:5432/warehouse")
    dagster = make_url(s.dagster_database_url)
    assert (dagster.host, dagster.database, dagster.password) == ("db.internal", "flux_dagster", "secret")


def test_exported_embedded_url_is_not_mistaken_for_an_external_server() -> None:
    # `eval "$(flux env)"` exports the embedded URL; `flux stack down` must still own that server.
    s = settings(
        database_url="postgresql+psycopg://flux:flux@127.0.0.1:55432/flux",
        pg_port=55432,
        neo4j_uri="bolt://127.0.0.1:57687",
        neo4j_bolt_port=57687,
    )
    assert not s.postgres_external
    assert not s.neo4j_external


def test_non_postgres_database_url_is_a_config_error_naming_the_variable() -> None:
    s = settings(database_url="mysql://x@y/z")
    with pytest.raises(FluxConfigError) as err:
        _ = s.platform_database_url
    assert err.value.variable == "FLUX_DATABASE_URL"


def test_settings_read_flux_prefixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUX_EMBEDDING_DIM", "768")
    monkeypatch.setenv("FLUX_SOURCE_MODE", "snapshot")
    s = FluxSettings()
    assert s.index.embedding_dim == 768 and s.sources.source_mode == "snapshot"
    monkeypatch.setenv("FLUX_SOURCE_MODE", "bogus")
    with pytest.raises(ValueError):
        FluxSettings()


def test_every_setting_is_documented_in_the_configuration_page() -> None:
    from dagster_project.core.settings import REPO_ROOT, FluxSettings

    readme = (REPO_ROOT / "docs" / "configuration.md").read_text()
    missing = [name for name in FluxSettings.variables() if f"`FLUX_{name.upper()}`" not in readme]
    assert not missing, f"undocumented settings: {missing}"


def test_flat_names_route_to_their_group_and_the_environment_fills_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUX_HNSW_M", "24")
    monkeypatch.setenv("FLUX_LLM_MODEL", "from-env")
    s = FluxSettings(hnsw_ef_search=50, llm_model="given")
    assert (s.index.hnsw_m, s.index.hnsw_ef_search) == (24, 50)  # env for what was not given, the argument wins
    assert s.llm.llm_model == "given"


def test_evolve_changes_only_what_it_names_and_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    s = FluxSettings(hnsw_m=20, bm25_k1=1.1)
    monkeypatch.setenv("FLUX_HNSW_M", "30")  # an evolved copy never re-reads the environment
    changed = s.evolve(bm25_k1=1.2, home="/elsewhere")
    assert (changed.retrieval.bm25_k1, changed.index.hnsw_m, str(changed.home)) == (1.2, 20, "/elsewhere")
    assert s.retrieval.bm25_k1 == 1.1
    with pytest.raises(ValueError, match="hnsw_m"):
        s.evolve(hnsw_m=1)


def test_an_unknown_name_is_an_error_not_a_silent_default() -> None:
    with pytest.raises(ValueError, match="hnsw_mm"):
        FluxSettings(hnsw_mm=8)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="hnsw_mm"):
        FluxSettings().evolve(hnsw_mm=8)


def test_the_configuration_page_names_each_variables_group() -> None:
    from dagster_project.core.settings import GROUP_OF, REPO_ROOT

    page = REPO_ROOT / "docs" / "configuration.md"
    rows = [line for line in page.read_text().splitlines() if line.startswith("| `FLUX_")]
    wrong = [
        name
        for name, group in GROUP_OF.items()
        if not any(f"`FLUX_{name.upper()}`" in row and f"`settings.{group}`" in row for row in rows)
    ]
    assert not wrong, f"docs/configuration.md rows that do not name the variable's group: {wrong}"


# Variables the docs name that are not settings: what Flux exports to dbt (settings.dbt_env), and families named
# by their prefix (FLUX_HNSW_*), each of whose members is a setting.
DERIVED = {"FLUX_DBT_HOST", "FLUX_DBT_PORT", "FLUX_DBT_USER", "FLUX_DBT_PASSWORD", "FLUX_DBT_DBNAME"}


def test_every_variable_the_docs_name_is_a_setting_flux_reads() -> None:
    import re
    import subprocess

    from dagster_project.core.settings import REPO_ROOT, dbt_env

    assert set(dbt_env(FluxSettings())) == DERIVED
    settings = {f"FLUX_{name.upper()}" for name in FluxSettings.variables()}
    pages = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    named = {m.group(0) for page in pages for m in re.finditer(r"\bFLUX_[A-Z0-9_]*[A-Z0-9]\b", page.read_text())}
    families = {name for name in named if any(s.startswith(name + "_") for s in settings | DERIVED)}
    assert not named - settings - DERIVED - families, "documented but not a setting"

    # ...and every setting is read by the code, not only declared (by its field name or its variable name).
    tracked = subprocess.run(
        ["git", "ls-files", "dagster_project", "retrieval", "serving", "dbt", "deploy", "Makefile"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    code = "\n".join(
        (REPO_ROOT / path).read_text(errors="ignore")
        for path in tracked
        if not path.endswith("setting_groups.py") and (REPO_ROOT / path).is_file()
    )
    unread = [name for name in FluxSettings.variables() if not re.search(rf"\b{name}\b|\bFLUX_{name.upper()}\b", code)]
    assert not unread, f"settings declared and documented but read nowhere: {unread}"
