"""Every FLUX_ variable given a value of the wrong kind: `flux` prints one line naming the variable and what it
accepts, exits 2, and never shows a traceback, a secret, or markup applied to the text."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

from dagster_project.core.settings import FluxSettings, setting_kinds
from tests.support.settings_env import flux_exit_code, settings_error

# Text that no setting of each kind accepts.
WRONG_BY_KIND: dict[object, str] = {int: "7k", float: "fast", bool: "maybe"}
# Settings whose type accepts any text (a name, a path, a secret, a cron line checked by Dagster): nothing to refuse.
FREE_TEXT = (str, Path, typing.Any)


def wrong_value(name: str, info: FieldInfo) -> str | None:
    """A value of the wrong kind for this setting, or None when the setting takes any text."""
    kinds = setting_kinds(info)
    if typing.get_origin(kinds[0]) is typing.Literal:
        return "bogus"
    if kinds[0] in WRONG_BY_KIND:
        return WRONG_BY_KIND[kinds[0]]
    if any(getattr(m, "pattern", None) for m in info.metadata):
        return "Not-A-Name"
    if name.endswith("_url") or name == "neo4j_uri":
        return "http://127.0.0.1:notaport/x"
    return None


CASES = {name: wrong_value(name, info) for name, info in FluxSettings.variables().items()}
CHECKED = {name: value for name, value in CASES.items() if value is not None}


def test_only_free_text_settings_go_unchecked() -> None:
    unchecked = {name for name, value in CASES.items() if value is None}
    typed = [
        name
        for name in unchecked
        if not all(
            kind in FREE_TEXT or getattr(kind, "__name__", "") == "SecretStr"
            for kind in setting_kinds(FluxSettings.variables()[name])
        )
    ]
    assert not typed, f"settings with a type but no wrong value tried: {typed}"
    assert len(CHECKED) > 80  # the numbers, switches, choices, ports and URLs


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_a_wrong_value_is_one_line_naming_the_variable(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    variable = f"FLUX_{name.upper()}"
    monkeypatch.setenv(variable, CHECKED[name])
    code = flux_exit_code(monkeypatch, "env")
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"flux: error: {variable}"), err
    assert "Traceback" not in err and "validation error" not in err
    annotation = setting_kinds(FluxSettings.variables()[name])[0]
    if typing.get_origin(annotation) is typing.Literal:
        assert all(f"'{choice}'" in err for choice in typing.get_args(annotation)), err


def test_a_port_out_of_range_is_refused_rather_than_reported_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FLUX_PG_PORT", "99999")
    assert flux_exit_code(monkeypatch, "stack", "status") == 2
    assert "FLUX_PG_PORT='99999' is not valid: input should be less than or equal to 65535" in capsys.readouterr().err


def test_secrets_and_urls_are_not_echoed_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUX_DATABASE_URL", "postgresql://flux:hunter2@db:notaport/flux")
    said = str(settings_error())
    assert "FLUX_DATABASE_URL" in said and "hunter2" not in said
    assert "notaport" in said  # the part at fault is named


def test_the_installed_command_prints_error_text_verbatim() -> None:
    """Through the console script: brackets and colons in the text stay as written (no markup, no emoji)."""
    env = {**os.environ, "FLUX_NEO4J_URI": "bolt://127.0.0.1:abc"}
    flux = Path(sys.executable).with_name("flux")
    out = subprocess.run([str(flux), "stack", "status"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "flux: error: FLUX_NEO4J_URI is not valid: the port is not a number from 0 to 65535 "
        "(Port could not be cast to integer value as 'abc')"
    ]
    env = {**os.environ, "FLUX_SERVING_ROLE": "Bad-Role"}
    out = subprocess.run([str(flux), "stack", "status"], env=env, capture_output=True, text=True, timeout=120)
    assert "pattern '^[a-z_][a-z0-9_]{0,62}$'" in out.stderr, out.stderr
