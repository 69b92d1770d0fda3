"""The launcher knows what it runs: a server of ours whose PID file was lost is found by what it serves (its data
folder or workspace) and adopted, never started twice; a port held by another program is refused in one line;
readiness is judged by the process just started owning its port; `status` checks the port it reports; two `up` of
one FLUX_HOME at once are serialised. Real redis-server, Neo4j and Postgres processes on ports of their own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.stack import ServiceStartError, ServiceState, Stack
from dagster_project.stack.neo4j import Neo4jService
from dagster_project.stack.redis import RedisService
from tests.support.ports import free_port


def _servers_of(service: RedisService | Neo4jService) -> list[int]:
    found = []
    for process in psutil.process_iter():
        try:
            if service.serves_this_home(process):
                found.append(process.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_a_redis_whose_pid_file_was_lost_is_adopted_not_started_twice(redis_service: RedisService) -> None:
    first = redis_service.pidfile.live_pid()
    assert first is not None
    redis_service.pidfile.clear()

    status = redis_service.status()
    assert status.state is ServiceState.RUNNING and f"untracked pid {first}" in status.detail

    result = Stack(redis_service.settings)._up_one(redis_service)
    assert result.detail == "running (adopted)" and result.start_seconds is None
    assert redis_service.pidfile.live_pid() == first and _servers_of(redis_service) == [first]


def test_a_server_whose_data_folder_was_deleted_under_it_is_named_not_used(redis_service: RedisService) -> None:
    """`rm -rf` of a store while its server runs: the server still answers, from files that are gone. Status and
    `up` name the process and the folder in one line; `down` still stops it."""
    pid = redis_service.pidfile.live_pid()
    assert pid is not None
    shutil.rmtree(redis_service.data_dir)
    status = redis_service.status()
    assert status.state is ServiceState.CONFLICT
    assert f"pid {pid}" in status.detail and f"{redis_service.data_dir} was deleted" in status.detail
    assert "\n" not in status.detail
    with pytest.raises(ServiceStartError, match=f"redis: .*pid {pid}.* was deleted under it"):
        Stack(redis_service.settings)._up_one(redis_service)
    assert redis_service.stop() is True


def test_down_stops_a_server_whose_pid_file_was_lost(redis_service: RedisService) -> None:
    pid = redis_service.pidfile.live_pid()
    assert pid is not None
    redis_service.pidfile.clear()
    assert redis_service.stop() is True
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert redis_service.status().state is ServiceState.STOPPED


def test_a_port_held_by_another_program_is_refused_in_one_line(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (`make setup` installs it with apt)")
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        service = RedisService(FluxSettings(home=tmp_path, redis_port=port, redis_url=None))
        status = service.status()
        assert (
            status.state is ServiceState.CONFLICT and f"127.0.0.1:{port} is held by pid {os.getpid()}" in status.detail
        )
        with pytest.raises(ServiceStartError) as refused:
            Stack(service.settings)._up_one(service)
        message = str(refused.value)
        assert message.startswith(f"redis: 127.0.0.1:{port} is held by pid {os.getpid()}") and "\n" not in message
        assert "FLUX_REDIS_PORT" in message and service.pidfile.read() is None and not _servers_of(service)


def test_readiness_is_the_started_process_owning_its_port_not_a_reply_from_another(
    redis_service: RedisService, tmp_path: Path
) -> None:
    """A second redis-server on a port the first holds dies on `bind`; the first still answers PING there."""
    squatting = RedisService(redis_service.settings.evolve(home=tmp_path / "second"))
    with pytest.raises(ServiceStartError, match="exited during start-up"):
        squatting.spawn_and_wait(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(squatting.port),
                "--dir",
                str(squatting.data_dir),
                "--save",
                "",
            ],
            squatting._ping,
            data_dir=squatting.data_dir,
        )
    assert squatting.pidfile.read() is None
    assert redis_service.is_running()


@pytest.fixture
def neo4j_home(tmp_path: Path) -> Iterator[Neo4jService]:
    service = Neo4jService(FluxSettings(home=tmp_path / "home", neo4j_bolt_port=free_port(), neo4j_uri=None))
    service.start()
    try:
        yield service
    finally:
        service.stop()


@pytest.mark.resilience
def test_a_neo4j_store_held_by_an_untracked_jvm_is_adopted_on_its_port_and_refused_on_another(
    neo4j_home: Neo4jService,
) -> None:
    jvm = neo4j_home.pidfile.live_pid()
    assert jvm is not None
    neo4j_home.pidfile.clear()

    elsewhere = Neo4jService(neo4j_home.settings.evolve(neo4j_bolt_port=free_port()))
    with pytest.raises(ServiceStartError) as refused:
        Stack(elsewhere.settings)._up_one(elsewhere)
    assert f"neo4j: pid {jvm}" in str(refused.value) and "FLUX_NEO4J_BOLT_PORT" in str(refused.value)
    assert _servers_of(neo4j_home) == [jvm]  # no second JVM tried the store lock

    adopted = Stack(neo4j_home.settings)._up_one(neo4j_home)
    assert adopted.detail == "running (adopted)" and neo4j_home.pidfile.live_pid() == jvm


def _flux(home: Path, ports: dict[str, int], *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "FLUX_HOME": str(home),
        "FLUX_PG_PORT": str(ports["pg"]),
        "FLUX_NEO4J_BOLT_PORT": str(ports["neo4j"]),
        "FLUX_REDIS_PORT": str(ports["redis"]),
        "FLUX_DAGSTER_DAEMON": "false",
    }
    for variable in ("FLUX_DATABASE_URL", "FLUX_NEO4J_URI", "FLUX_REDIS_URL"):
        env.pop(variable, None)
    flux = Path(sys.executable).with_name("flux")
    return subprocess.Popen([str(flux), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.resilience
def test_two_ups_of_a_fresh_home_at_once_start_each_server_once(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    ports = {"pg": free_port(), "neo4j": free_port(), "redis": free_port()}
    settings = FluxSettings(
        home=home, pg_port=ports["pg"], neo4j_bolt_port=ports["neo4j"], redis_port=ports["redis"], dagster_daemon=False
    )
    stack = Stack(settings)
    try:
        ups = [_flux(home, ports, "stack", "up") for _ in range(2)]
        outputs = [up.communicate(timeout=600) for up in ups]
        assert [up.returncode for up in ups] == [0, 0], outputs
        printed = "\n".join(out for out, _ in outputs)
        assert printed.count("started") >= 2 and "already running" in printed  # the second found the first's
        assert _servers_of(stack.neo4j) == [stack.neo4j.pidfile.live_pid()]
        if shutil.which("redis-server"):
            assert _servers_of(stack.redis) == [stack.redis.pidfile.live_pid()]

        other = free_port()
        status = _flux(home, {**ports, "pg": other}, "stack", "status").communicate(timeout=120)[0]
        assert f"not FLUX_PG_PORT={other}" in status and f"127.0.0.1:{ports['pg']}" in status, status
    finally:
        down = _flux(home, ports, "stack", "down")
        down.communicate(timeout=300)
    assert not _servers_of(stack.neo4j) and not _servers_of(stack.redis)
    assert stack.postgres.status().state is ServiceState.STOPPED
