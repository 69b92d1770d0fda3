"""No server runs as root: the privilege drop covers uid, gid and supplementary groups, so a clone under a 0700
parent (/root, `mktemp -d`) starts; Neo4j and Redis run as the same unprivileged account as Postgres."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.stack import Stack
from dagster_project.stack.postgres import PostgresService
from dagster_project.stack.privileges import make_traversable, service_user

# Kills, starves or restarts real processes, or starts a second stack / cluster / daemon: `make test-extended`.
pytestmark = pytest.mark.resilience

root_only = pytest.mark.skipif(
    os.geteuid() != 0, reason="the privilege drop happens only when started as root: run `make test-extended` as root"
)


def _supplementary_groups(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Groups:"):
            return {int(g) for g in line.split()[1:]}
    raise AssertionError(f"no Groups line for pid {pid}")


def _server_pids(settings: FluxSettings) -> dict[str, int]:
    stack = Stack(settings)
    pids = {"postgres": int((stack.postgres.pgdata / "postmaster.pid").read_text().split()[0])}
    for service in (stack.neo4j, stack.redis):
        pid = service.pidfile.live_pid()
        if pid is not None:
            pids[service.name] = pid
    return pids


@pytest.fixture
def sealed_dir() -> Iterator[Path]:
    """A folder like /root or `mktemp -d`: mode 0700, owned by root."""
    with tempfile.TemporaryDirectory(prefix="flux-0700-") as name:
        path = Path(name)
        path.chmod(0o700)
        yield path


@root_only
def test_every_server_runs_without_root_identities(stack: FluxSettings) -> None:
    pids = _server_pids(stack)
    assert {"postgres", "neo4j"} <= set(pids)
    user = service_user(stack.service_user, stack.home / "service-home")
    assert user is not None
    for name, pid in pids.items():
        proc = psutil.Process(pid)
        assert set(proc.uids()) == {user.uid}, f"{name} runs with uids {proc.uids()}"
        assert set(proc.gids()) == {user.gid}, f"{name} runs with gids {proc.gids()}"
        assert 0 not in _supplementary_groups(pid), f"{name} kept root's supplementary groups"


@root_only
def test_a_uid_only_drop_is_refused_where_the_full_drop_passes(sealed_dir: Path, stack: FluxSettings) -> None:
    """The bug this guards against: `user=` alone keeps gid 0, and a 0701 root folder's group bits then apply."""
    program = sealed_dir / "bin" / "hello"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\necho hello\n")
    program.chmod(0o755)
    make_traversable([program])
    assert sealed_dir.stat().st_mode & 0o777 == 0o701
    user = service_user(stack.service_user, stack.home / "service-home")
    assert user is not None
    with pytest.raises(PermissionError):
        subprocess.run([str(program)], user=user.uid, capture_output=True, check=True)
    done = subprocess.run([str(program)], capture_output=True, text=True, check=True, **user.popen_kwargs())
    assert done.stdout.strip() == "hello"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_postgres_initialises_and_serves_from_under_a_0700_parent(sealed_dir: Path, stack: FluxSettings) -> None:
    settings = FluxSettings(home=sealed_dir / "flux-home", pg_port=_free_port(), service_user=stack.service_user)
    service = PostgresService(settings)
    service.start()
    try:
        pg = settings.postgres
        with psycopg.connect(
            host="127.0.0.1",
            port=pg.pg_port,
            user=pg.pg_user,
            dbname="postgres",
            password=pg.pg_password.get_secret_value(),
            connect_timeout=5,
        ) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        if os.geteuid() == 0:
            assert service.pgdata.stat().st_uid != 0
    finally:
        service.stop()
    assert not service.is_running()
