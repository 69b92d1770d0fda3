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
    s = settings(database_url="postgresql://me:secret@db.internal:5432/warehouse",
                 neo4j_uri="neo4j://graph:7687", redis_url="redis://cache:6379/2")
    assert s.postgres_external and s.neo4j_external and s.redis_external
    assert s.platform_database_url.startswith("postgresql+psycopg://me:secret@db.internal:5432/warehouse")
    dagster = make_url(s.dagster_database_url)
    assert (dagster.host, dagster.database, dagster.password) == ("db.internal", "flux_dagster", "secret")


def test_exported_embedded_url_is_not_mistaken_for_an_external_server() -> None:
    # `eval "$(flux env)"` exports the embedded URL; `flux stack down` must still own that server.
    s = settings(database_url="postgresql+psycopg://flux:flux@127.0.0.1:55432/flux", pg_port=55432,
                 neo4j_uri="bolt://127.0.0.1:57687", neo4j_bolt_port=57687)
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
    assert s.embedding_dim == 768 and s.source_mode == "snapshot"
    monkeypatch.setenv("FLUX_SOURCE_MODE", "bogus")
    with pytest.raises(ValueError):
        FluxSettings()


def test_every_setting_is_documented_in_the_readme() -> None:
    from dagster_project.core.settings import REPO_ROOT, FluxSettings

    readme = (REPO_ROOT / "README.md").read_text()
    missing = [name for name in FluxSettings.model_fields if f"`FLUX_{name.upper()}`" not in readme]
    assert not missing, f"undocumented settings: {missing}"
