"""What a run reads from FLUX_ settings is fixed when it is submitted, not by the process that executes it.

A run of the code location executes in a worker started by the location's code server, with the code server's
environment. Two kinds of settings follow from that:

- **run settings** (source mode, snapshot folder, raw root, churn limits, tuning, retrieval and LLM endpoints, eval
  sizes…): the command's value travels with the run as a tag `flux/setting/FLUX_<NAME>` (JSON) wherever it differs
  from the code location's, and the worker's `settings` resource applies it (`settings_for_run`). The UI shows
  the tags on the run, so what a run read is on the run.
- **stack settings** (FLUX_HOME, databases, Neo4j, Redis, the daemon and its schedule, the Ray cluster, the
  embedding model the resources load, and every secret): a run cannot change them, because the location's
  resources, schedules and sensors are built from them. A command whose value differs from the location's is
  refused before any run exists (`StackSettingsMismatch`), naming each variable and both values. Secrets never
  travel and are compared by fingerprint.

The code location publishes its own values as definitions metadata (`location_settings`), so a command compares
against what the location actually loaded, not against a file that may be stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr
from sqlalchemy.engine import make_url

from dagster_project.core.setting_groups import GROUP_OF
from dagster_project.core.settings import FluxSettings, setting_kinds

SETTING_TAG_PREFIX = "flux/setting/"
LOCATION_SETTINGS_KEY = "flux/settings"
# Whole groups a run cannot change: the connections its resources hold, the serving role the migrations create, and
# the daemon's executor, Ray cluster and MLflow (built when the location loads).
STACK_GROUPS = frozenset({"postgres", "graph", "serving", "ops"})
# Single settings outside those groups that the location reads when it loads (resources, the runtime folder).
STACK_FIELDS = frozenset(
    {
        "home",
        "redis_url",
        "redis_port",
        "embedding_model",
        "embedding_dim",
        "embedding_batch_size",
        "embedding_query_prefix",
    }
)
# Settings no run reads (the local servers' own, the HTTP API's, the daemon's schedule and timing): a command's value
# is neither carried nor checked.
NOT_READ_BY_RUNS = frozenset(
    {
        "service_start_timeout",
        "service_user",
        "allow_apt",
        "redis_server_bin",
        "neo4j_heap",
        "neo4j_pagecache_mb",
        "serve_host",
        "serve_port",
        "max_question_chars",
        "max_request_bytes",
        "api_keys",
        "api_rate_limit_per_minute",
        "cors_origins",
        "conversation_retention_days",
        "dagster_port",
        "dagster_daemon",
        "debug",
        "lineage_guard",
        "mlflow_port",
        "nightly_cron",
        "nightly_timezone",
        "raw_freshness_hours",
        "index_freshness_hours",
        "snapshot_sensor_interval",
        "automation_interval",
    }
)
# Connections are compared as the URLs they resolve to (a URL written out and the port it derives from name one
# server); the parts they are derived from are then not compared one by one.
CONNECTIONS = {
    "database_url": "platform_database_url",
    "dagster_database": "dagster_database_url",
    "mlflow_tracking_uri": "resolved_mlflow_tracking_uri",
    "serving_database_url": "resolved_serving_database_url",
    "neo4j_uri": "resolved_neo4j_uri",
    "redis_url": "resolved_redis_url",
    "ray_address": "resolved_ray_address",
}
DERIVED_FROM_CONNECTIONS = frozenset(
    {"pg_port", "pg_user", "pg_password", "pg_database", "mlflow_database", "serving_role", "serving_password"}
    | {"neo4j_bolt_port", "redis_port"}
)


class StackSettingsMismatch(RuntimeError):
    """A command whose stack settings differ from the code location's: no run was created."""


def flat_values(settings: FluxSettings) -> dict[str, Any]:
    """Every setting by its flat name, as the values the object holds (groups flattened)."""
    groups = set(GROUP_OF.values())
    values = {name: getattr(settings, name) for name in type(settings).model_fields if name not in groups}
    for name, group in GROUP_OF.items():
        values[name] = getattr(getattr(settings, group), name)
    return values


def is_stack_setting(name: str) -> bool:
    return name in STACK_FIELDS or GROUP_OF.get(name) in STACK_GROUPS


def _has_credentials(value: Any) -> bool:
    return isinstance(value, str) and "://" in value and urlsplit(value).password is not None


def _travels(name: str, value: Any) -> bool:
    """A run setting whose value may be written on the run for anyone with the UI to read."""
    return (
        name not in NOT_READ_BY_RUNS
        and not is_stack_setting(name)
        and not isinstance(value, SecretStr)
        and not _has_credentials(value)
    )


def _encode(value: Any) -> str:
    return json.dumps(str(value) if hasattr(value, "__fspath__") else value)


def _shown(value: Any) -> str:
    """A value as a refusal prints it: a secret by fingerprint, a URL with its password replaced by one."""
    if isinstance(value, SecretStr):
        return _fingerprint(value.get_secret_value())
    if _has_credentials(value):
        url = make_url(value)
        return _encode(url.render_as_string(hide_password=True)) + f" (password {_fingerprint(url.password)})"
    return _encode(value)


def _fingerprint(secret: object) -> str:
    return "sha256:" + hashlib.sha256(str(secret).encode()).hexdigest()[:12]


def _checked_values(settings: FluxSettings) -> dict[str, str]:
    """The settings a run reads but cannot carry, as shown: connections by what they resolve to."""
    checked = {}
    for name, value in flat_values(settings).items():
        if name in NOT_READ_BY_RUNS or name in DERIVED_FROM_CONNECTIONS or _travels(name, value):
            continue
        resolved = getattr(settings, CONNECTIONS[name]) if name in CONNECTIONS else value
        checked[f"FLUX_{name.upper()}"] = _shown(resolved)
    return checked


def location_settings(settings: FluxSettings) -> dict[str, str]:
    """What the code location publishes: each setting a run reads but cannot carry, as shown (fingerprints for
    secrets and passwords), and each one it can carry, JSON-encoded. Nothing in it reveals a secret."""
    carried = {f"FLUX_{n.upper()}": _encode(v) for n, v in flat_values(settings).items() if _travels(n, v)}
    return dict(sorted((_checked_values(settings) | carried).items()))


def stack_mismatches(command: FluxSettings, location: Mapping[str, str]) -> list[str]:
    """One line per setting a run cannot carry whose command value differs from the location's."""
    return [
        f"{variable} is {mine} here but {location[variable]} in the code location"
        for variable, mine in sorted(_checked_values(command).items())
        if variable in location and mine != location[variable]
    ]


def check_stack_settings(command: FluxSettings, location: Mapping[str, str]) -> None:
    """Refuse, in one message, a command whose stack settings are not the code location's."""
    lines = stack_mismatches(command, location)
    if lines:
        raise StackSettingsMismatch(
            "this command's settings differ from the running code location's, and a run cannot carry them: "
            + "; ".join(lines)
            + ". Restart the stack with the new values (`make down && make up`), or run the command with the "
            'stack\'s values (`eval "$(flux env)"`)'
        )


def setting_tags(command: FluxSettings, location: Mapping[str, str]) -> dict[str, str]:
    """The run settings whose command value differs from the code location's, as run tags."""
    tags = {}
    for name, value in sorted(flat_values(command).items()):
        if not _travels(name, value):
            continue
        variable = f"FLUX_{name.upper()}"
        encoded = _encode(value)
        if location.get(variable) != encoded:
            tags[SETTING_TAG_PREFIX + variable] = encoded
    return tags


def settings_for_run(base: FluxSettings, tags: Mapping[str, str]) -> FluxSettings:
    """The settings a run reads: the location's, with the values its tags carry. A tag naming a setting that may
    not travel (a stack setting, a secret, an unknown name) is an error, not ignored."""
    changes: dict[str, Any] = {}
    for tag, encoded in tags.items():
        if not tag.startswith(SETTING_TAG_PREFIX):
            continue
        variable = tag.removeprefix(SETTING_TAG_PREFIX)
        name = variable.removeprefix("FLUX_").lower()
        info = FluxSettings.variables().get(name) if variable.startswith("FLUX_") else None
        secret = info is not None and SecretStr in setting_kinds(info)
        if info is None or secret or is_stack_setting(name) or name in NOT_READ_BY_RUNS:
            raise ValueError(f"the run's tag {tag} names no setting a run can carry")
        changes[name] = json.loads(encoded)
    return base.evolve(**changes) if changes else base
