"""Bad input to `flux` commands, without any service: each is refused with an exact exit code and one message
that names the problem (the option, the path or the variable to check), never a traceback.

The CLI runs in-process through `dagster_project.cli.main.main` (the console script's entry point, where user-fixable
errors become one line and exit 2), with stdin/stdout/stderr isolated by Click's CliRunner. Postgres is pointed at a
port nothing listens on, so a command that wrongly connected before validating its input says so instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import HTTPException

from dagster_project.core.settings import FluxSettings, get_settings
from serving.security import ApiKeyGuard, key_hash
from tests.support.cli import flux
from tests.support.ports import free_port


@pytest.fixture
def dead_postgres(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A runtime folder of the test's own and a Postgres URL on which nothing listens."""
    monkeypatch.setenv("FLUX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FLUX_DATABASE_URL", f"postgresql://flux:flux@127.0.0.1:{free_port()}/flux")
    get_settings.cache_clear()
    return "FLUX_DATABASE_URL"


def test_chat_rejects_an_unknown_mode_before_connecting(dead_postgres: str) -> None:
    result = flux("chat", "--mode", "deep", stdin="What does TP53 do?\n")
    assert result.code == 2
    assert "Invalid value for --mode: mode must be quick or thinking" in result.said
    assert dead_postgres not in result.said


def test_chat_with_postgres_down_is_one_line_naming_the_variable(dead_postgres: str) -> None:
    result = flux("chat", stdin="What does TP53 do?\n")
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.flux_lines[0].startswith("flux: error: Postgres is not reachable")
    assert dead_postgres in result.flux_lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["evals", "show"],
        ["evals", "accept"],
        ["index", "list"],
        ["index", "rollback"],
        ["resolution", "fit"],
        ["materialize", "--select", "group:platform"],
    ],
    ids=lambda args: "-".join(args[:2]),
)
def test_a_command_needing_postgres_says_in_one_line_that_it_is_down(dead_postgres: str, args: list[str]) -> None:
    result = flux(*args)
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Postgres is not reachable" in result.stderr and dead_postgres in result.stderr


def test_backup_with_postgres_down_is_one_line_and_creates_nothing(dead_postgres: str, tmp_path: Path) -> None:
    target = tmp_path / "backup"
    result = flux("backup", str(target))
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Postgres is not reachable" in result.stderr and dead_postgres in result.stderr
    assert not target.exists()


def test_restore_with_postgres_down_is_one_line(dead_postgres: str, tmp_path: Path) -> None:
    result = flux("restore", str(tmp_path))
    assert result.code == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Postgres is not reachable" in result.stderr and dead_postgres in result.stderr


def test_restore_from_a_directory_that_does_not_exist_is_a_usage_error(
    dead_postgres: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a short relative path: the error box does not fold it
    result = flux("restore", "no-such-backup")
    assert result.code == 2
    assert "Invalid value for 'source': dir 'no-such-backup' does not exist." in result.said, result.said
    assert dead_postgres not in result.said


def test_restore_from_a_file_is_a_usage_error(
    dead_postgres: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("backup.tar").write_text("not a directory")
    result = flux("restore", "backup.tar")
    assert result.code == 2
    assert "Invalid value for 'source': dir 'backup.tar' is a file." in result.said, result.said
    assert dead_postgres not in result.said


def test_index_list_rejects_a_limit_below_one(dead_postgres: str) -> None:
    result = flux("index", "list", "--limit", "0")
    assert result.code == 2
    assert "Invalid value for '--limit': Input should be greater than or equal to 1" in result.said, result.said


def test_evals_accept_rejects_an_unknown_scorecard_before_connecting(dead_postgres: str) -> None:
    result = flux("evals", "accept", "--scorecard", "bogus")
    assert result.code == 2
    assert "Invalid value for --scorecard: one of retrieval, answer, resolution" in result.said, result.said
    assert dead_postgres not in result.said


def test_evals_fit_judge_without_the_pubmedqa_file_names_the_path_and_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLUX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FLUX_SNAPSHOT_DIR", str(tmp_path / "snapshot"))
    get_settings.cache_clear()
    result = flux("evals", "fit-judge")
    assert result.code == 2
    assert result.stderr.strip() == (
        f"flux: error: no PubMedQA file at {tmp_path / 'snapshot/pubmedqa/ori_pqal.json'} (check FLUX_SNAPSHOT_DIR)"
    )


def test_resolution_fit_rejects_an_output_in_a_missing_directory_before_connecting(
    dead_postgres: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = flux("resolution", "fit", "--output", "no-such-dir/model.json")
    assert result.code == 2
    assert "Invalid value for --output: no directory no-such-dir to write model.json into" in result.said, result.said
    assert dead_postgres not in result.said
    assert not Path("no-such-dir").exists()


@pytest.fixture
def default_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdout at the width `flux` gives it when COLUMNS is unset (120), whatever COLUMNS this test process inherited
    (the console reads it once, at import, and a pytest-xdist worker may run with COLUMNS=80)."""
    from dagster_project.cli.output import console

    monkeypatch.setattr(console, "width", 120)


def _keys_new() -> tuple[str, str]:
    result = flux("keys", "new")
    assert result.code == 0 and result.stderr == ""
    key = re.fullmatch(
        r"key \(give it to the client, it is not stored anywhere\): (flux_[A-Za-z0-9_-]{43})",
        result.stdout.splitlines()[0],
    )
    entry = re.fullmatch(r"FLUX_API_KEYS entry: (sha256:[0-9a-f]{64})", result.stdout.splitlines()[1])
    assert key and entry, result.stdout
    assert len(result.stdout.splitlines()) == 2
    return key.group(1), entry.group(1)


@pytest.mark.usefixtures("default_width")
def test_keys_new_prints_a_key_whose_printed_hash_the_api_key_check_accepts(tmp_path: Path) -> None:
    key, entry = _keys_new()
    assert entry == key_hash(key)
    guard = ApiKeyGuard(FluxSettings(home=tmp_path, api_keys=entry))
    guard.check(f"Bearer {key}")  # accepted: returns
    with pytest.raises(HTTPException) as rejected:
        guard.check(f"Bearer {key}x")
    assert rejected.value.status_code == 401 and rejected.value.detail == "unknown API key"
    # The plain key in FLUX_API_KEYS is accepted too (hashed at start-up).
    ApiKeyGuard(FluxSettings(home=tmp_path, api_keys=f"sha256:{'0' * 64},{key}")).check(f"Bearer {key}")


@pytest.mark.usefixtures("default_width")
def test_keys_new_gives_a_different_key_each_time() -> None:
    first, second = _keys_new(), _keys_new()
    assert first[0] != second[0] and first[1] != second[1]


def test_an_unexpected_failure_is_one_line_and_the_traceback_only_on_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dagster_project.stack import Stack

    def broken(self: Stack) -> list[object]:
        raise RuntimeError("the pid file is unreadable\n  File 'x.py', line 1")

    monkeypatch.setattr(Stack, "status", broken)
    result = flux("stack", "status")
    assert result.code == 1
    assert result.flux_lines == [
        "flux: error: RuntimeError: the pid file is unreadable (FLUX_DEBUG=1 prints the traceback)"
    ]
    assert "Traceback" not in result.stderr and "x.py" not in result.stderr
    with pytest.raises(pytest.fail.Exception, match="crashed with a traceback: RuntimeError"):
        flux("stack", "status", env={"FLUX_DEBUG": "1"})  # the exception escapes main, as the user asked
