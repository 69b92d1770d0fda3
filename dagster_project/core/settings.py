"""One settings object for all of Flux: every variable is `FLUX_<FIELD>` and is documented in docs/configuration.md.

Service URLs are *derived* from the embedded-service ports unless the user names a server of their own with
FLUX_DATABASE_URL / FLUX_NEO4J_URI / FLUX_REDIS_URL; then that server is used and nothing is started for it.
"""

from __future__ import annotations

import os
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from dagster_project.core.setting_groups import (
    DEFAULT_HOME,
    GROUP_OF,
    GROUPS,
    CacheSettings,
    EvalSettings,
    GraphSettings,
    IndexSettings,
    LlmSettings,
    OpsSettings,
    PostgresSettings,
    ReleaseSettings,
    RetrievalSettings,
    ServingSettings,
    SourceSettings,
)

# Re-exported: the installed package (its data) and the checkout (dbt/, .flux/) when there is one.
from dagster_project.core.setting_groups import PACKAGE_DIR as PACKAGE_DIR
from dagster_project.core.setting_groups import REPO_ROOT as REPO_ROOT
from dagster_project.core.tuning import DEFAULT_PRESET, load_preset


class FluxConfigError(RuntimeError):
    """A configuration or dependency problem that the user fixes by changing one variable or starting a service.

    `variable` names the FLUX_ variable to look at (None when no variable is at fault, only a step not yet run);
    the CLI prints this as one line, never a traceback.
    """

    def __init__(self, variable: str | None, message: str) -> None:
        super().__init__(f"{message} (check {variable})" if variable and variable not in message else message)
        self.variable = variable


class FluxSettings(BaseSettings):
    """All of Flux's settings: the runtime folder at the top, one group per concern below it.

    Construct with flat `FLUX_` names (`FluxSettings(hnsw_m=8)`, `settings.evolve(hnsw_m=8)`); read through the
    group (`settings.index.hnsw_m`). Environment variables keep their flat names: FLUX_HNSW_M.
    """

    model_config = SettingsConfigDict(env_prefix="FLUX_", extra="forbid", frozen=True)

    home: Path = Field(default=DEFAULT_HOME, description="All runtime state (databases, logs, stores).")
    service_start_timeout: float = Field(default=120.0, description="Seconds to wait for a service to be ready.")
    service_user: str = Field(
        default="flux-services", description="Started as root, the local servers run as this system user."
    )
    allow_apt: bool = Field(default=True, description="`make setup` may apt-get install redis-server.")
    tuning_preset: str = Field(
        default=DEFAULT_PRESET,
        description="The tuning profile: `default`, a bundled preset (core/presets/) or a path to a .json file.",
    )

    postgres: PostgresSettings
    graph: GraphSettings
    cache: CacheSettings
    sources: SourceSettings
    index: IndexSettings
    retrieval: RetrievalSettings
    serving: ServingSettings
    llm: LlmSettings
    evals: EvalSettings
    ops: OpsSettings
    releases: ReleaseSettings

    @model_validator(mode="before")
    @classmethod
    def _route_flat_names(cls, data: Any) -> Any:
        """Flat names go to their group; each group then reads the environment for what it was not given."""
        if not isinstance(data, dict):
            return data
        routed: dict[str, Any] = {k: v for k, v in data.items() if k not in GROUP_OF}
        given: dict[str, dict[str, Any]] = {group: {} for group in GROUPS}
        for name, value in data.items():
            if name in GROUP_OF:
                given[GROUP_OF[name]][name] = value
        _apply_preset(data, given)
        for group, group_cls in GROUPS.items():
            current = routed.get(group)
            if isinstance(current, group_cls) and not given[group]:
                continue
            base = current.model_dump() if isinstance(current, group_cls) else dict(current or {})
            routed[group] = group_cls(**{**base, **given[group]})
        return routed

    def evolve(self, **changes: Any) -> FluxSettings:
        """A validated copy with some `FLUX_` names changed (flat names, as in the environment)."""
        data: dict[str, Any] = {name: getattr(self, name) for name in type(self).model_fields}
        for group in GROUPS:
            data[group] = getattr(self, group).model_dump()
        return type(self).model_validate({**data, **changes})

    @classmethod
    def variables(cls) -> dict[str, FieldInfo]:
        """Every setting by its flat name (FLUX_<NAME>), groups flattened."""
        flat = {name: info for name, info in cls.model_fields.items() if name not in GROUPS}
        for group_cls in GROUPS.values():
            flat.update(group_cls.model_fields)
        return flat

    # --- derived paths ---------------------------------------------------------------------------------
    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    @property
    def resolution_curation_path(self) -> Path:
        return self.evals.resolution_curation or self.sources.snapshot_dir / "compath_dev" / "kegg_reactome_dev.tsv"

    @property
    def raw_root_path(self) -> str:
        return self.sources.raw_root or str(self.home / "raw")

    # --- derived URLs ----------------------------------------------------------------------------------
    # A URL that points at our own embedded port is not "external": that is what `eval $(flux env)` exports,
    # and `flux stack down` must still be able to stop the server behind it.
    @property
    def postgres_external(self) -> bool:
        pg = self.postgres
        return bool(pg.database_url) and not _is_local_port(pg.database_url, pg.pg_port)

    @property
    def neo4j_external(self) -> bool:
        return bool(self.graph.neo4j_uri) and not _is_local_port(self.graph.neo4j_uri, self.graph.neo4j_bolt_port)

    @property
    def redis_external(self) -> bool:
        return bool(self.cache.redis_url) and not _is_local_port(self.cache.redis_url, self.cache.redis_port)

    def _embedded_pg_url(self, database: str) -> str:
        pg = self.postgres
        password = pg.pg_password.get_secret_value()
        return f"postgresql+psycopg://{pg.pg_user}:{password}@127.0.0.1:{pg.pg_port}/{database}"

    @property
    def platform_database_url(self) -> str:
        """SQLAlchemy URL (psycopg 3) of the platform database."""
        if self.postgres.database_url:
            return _with_driver(self.postgres.database_url, "psycopg")
        return self._embedded_pg_url(self.postgres.pg_database)

    @property
    def resolved_serving_database_url(self) -> str:
        """What the query path connects as: FLUX_SERVING_DATABASE_URL; else, on the embedded server, the role the
        migrations create (read the index, write answers only), also when FLUX_DATABASE_URL names it (`flux env`);
        on a server of the user's, the platform role (set FLUX_SERVING_DATABASE_URL to a read-only role there)."""
        if self.serving.serving_database_url:
            return _with_driver(self.serving.serving_database_url, "psycopg")
        if self.postgres_external:
            return self.platform_database_url
        url = make_url(self.platform_database_url).set(
            username=self.serving.serving_role, password=self.serving.serving_password.get_secret_value()
        )
        return url.render_as_string(hide_password=False)

    def sibling_database_url(self, database: str, driver: str = "psycopg") -> str:
        """URL of another database on the same server as the platform database."""
        url = make_url(self.platform_database_url).set(database=database)
        return _with_driver(url.render_as_string(hide_password=False), driver)

    @property
    def dagster_database_url(self) -> str:
        return self.sibling_database_url(self.postgres.dagster_database, driver="psycopg2")

    @property
    def resolved_mlflow_tracking_uri(self) -> str:
        database = self.postgres.mlflow_database
        return self.ops.mlflow_tracking_uri or self.sibling_database_url(database, driver="psycopg2")

    @property
    def resolved_neo4j_uri(self) -> str:
        return self.graph.neo4j_uri or f"bolt://127.0.0.1:{self.graph.neo4j_bolt_port}"

    @property
    def neo4j_auth(self) -> tuple[str, str]:
        return self.graph.neo4j_user, self.graph.neo4j_password.get_secret_value()

    @property
    def resolved_redis_url(self) -> str:
        return self.cache.redis_url or f"redis://127.0.0.1:{self.cache.redis_port}/0"

    @property
    def resolved_ray_address(self) -> str | None:
        return self.ops.ray_address or os.environ.get("RAY_ADDRESS") or None


def _apply_preset(data: dict[str, Any], given: dict[str, dict[str, Any]]) -> None:
    """The preset's constants, for each one not given by name, not set by its FLUX_ variable (an experiment's
    override) and not already settled in a group passed whole (a copy made by `evolve`)."""
    preset = load_preset(str(data.get("tuning_preset") or os.environ.get("FLUX_TUNING_PRESET") or DEFAULT_PRESET))
    for name, value in preset.values.items():
        group = GROUP_OF[name]
        settled = data.get(group)
        if isinstance(settled, BaseSettings) or name in (settled or {}) or name in given[group]:
            continue
        if f"FLUX_{name.upper()}" not in os.environ:
            given[group][name] = value


def dbt_env(settings: FluxSettings) -> dict[str, str]:
    """dbt/profiles.yml reads these; derived from the platform URL so dbt and Flux share one database."""
    url = make_url(settings.platform_database_url)
    return {
        "FLUX_DBT_HOST": url.host or "127.0.0.1",
        "FLUX_DBT_PORT": str(url.port or 5432),
        "FLUX_DBT_USER": url.username or "",
        "FLUX_DBT_PASSWORD": url.password or "",
        "FLUX_DBT_DBNAME": url.database or "",
    }


def _is_local_port(url: str | None, port: int) -> bool:
    if not url:
        return False
    parsed = urlsplit(url)
    try:
        return parsed.hostname in {"127.0.0.1", "localhost"} and parsed.port == port
    except ValueError:
        return False


def _with_driver(url: str, driver: str) -> str:
    """Force a SQLAlchemy driver: with SQLAlchemy 2.1 a bare postgresql:// means psycopg 3, which
    dagster-postgres cannot use (docs/operations.md#pinned-dependencies), so every URL we hand out names its driver."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise FluxConfigError("FLUX_DATABASE_URL", f"not a PostgreSQL URL: {parsed.drivername}")
    return parsed.set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)


def as_environment(settings: FluxSettings, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment from which `FluxSettings()` reads exactly `settings`: `base` (default: this process's)
    with every FLUX_ variable replaced by the object's values (an unset optional is left out). A server started by
    `flux stack up` gets it, so it serves the settings object the command holds, not whatever its variables say."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("FLUX_")}
    values: dict[str, Any] = {
        name: getattr(settings, name) for name in type(settings).model_fields if name not in GROUPS
    }
    for group in GROUPS:
        values |= dict(getattr(settings, group))
    for name, value in values.items():
        if value is None:
            continue
        if hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        env[f"FLUX_{name.upper()}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


@lru_cache(maxsize=1)
def get_settings() -> FluxSettings:
    """The settings from this process's environment, read once. Entry points (the code location, the CLI, the
    API) call this; everything below them receives the object. A variable that does not parse is a
    FluxConfigError naming it and what it accepts."""
    try:
        return FluxSettings()
    except ValidationError as exc:
        raise invalid_variable(exc) from None


def invalid_variable(exc: ValidationError) -> FluxConfigError:
    """The first invalid setting of a validation error, as the variable a user sets and what it accepts."""
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else ""
    info = FluxSettings.variables().get(name)
    if info is None and "tuning preset" in str(error["msg"]):
        return FluxConfigError("FLUX_TUNING_PRESET", str(error["msg"]).removeprefix("Value error, "))
    if info is None:  # a whole-object error: no one variable to name
        return FluxConfigError(None, f"invalid settings: {error['msg']}")
    variable = f"FLUX_{name.upper()}"
    shown = f"={error['input']!r}" if _safe_to_show(info) else ""
    reason = str(error["msg"]).removeprefix("Value error, ")
    return FluxConfigError(variable, f"{variable}{shown} is not valid: {reason[:1].lower()}{reason[1:]}")


def _safe_to_show(info: FieldInfo) -> bool:
    """Numbers, switches and choices are echoed back; text may be a secret or a URL holding a password."""
    return all(kind in (int, float, bool) or typing.get_origin(kind) is typing.Literal for kind in setting_kinds(info))


def setting_kinds(info: FieldInfo) -> list[Any]:
    """The types a setting takes, None left out: `int | None` → [int]; `Literal[...]` stays whole."""
    if typing.get_origin(info.annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(info.annotation) if a is not type(None)]
    return [info.annotation]
