"""`flux` as the console script runs it, in-process: exit code and output, and a test failure if an exception
escapes `main` (the user would see a traceback)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from dagster_project.cli.main import main
from dagster_project.core.settings import get_settings

_BOX = re.compile("[╭╮╰╯│─]")


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def said(self) -> str:
        """stderr as one line: Typer's error box and rich's wrapping removed."""
        return " ".join(_BOX.sub(" ", self.stderr).split())

    @property
    def printed(self) -> str:
        return " ".join(self.stdout.split())

    @property
    def flux_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("flux:")]


def flux(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None) -> Outcome:
    """`flux ARGS` with `env` over the current environment (restored afterwards)."""
    saved_argv, saved_env = sys.argv, dict(os.environ)
    sys.argv = ["flux", *args]
    os.environ.update(env or {})
    get_settings.cache_clear()
    try:
        with CliRunner().isolation(input=stdin) as (out, err, _):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except Exception as exc:  # the user would see a traceback
                pytest.fail(f"`flux {' '.join(args)}` crashed with a traceback: {exc!r}")
            else:
                code = 0
            sys.stdout.flush()  # print() leaves text in the wrapper's buffer until a flush
            sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        get_settings.cache_clear()
    assert "Traceback" not in stdout + stderr
    return Outcome(code, stdout, stderr)
