"""Redis from Debian's `redis-server`, on 127.0.0.1. When it cannot be had, caches run in-process."""

from __future__ import annotations

import shutil
from pathlib import Path

import psutil

from dagster_project.core.settings import FluxSettings
from dagster_project.stack.base import ProcessService
from dagster_project.stack.process import PidFile, ServiceStartError


class RedisService(ProcessService):
    name = "redis"
    url_variable = "FLUX_REDIS_URL"
    port_variable = "FLUX_REDIS_PORT"

    def __init__(self, settings: FluxSettings) -> None:
        super().__init__(settings)
        self.binary = shutil.which(settings.cache.redis_server_bin)

    @property
    def pidfile(self) -> PidFile:
        port = self.settings.cache.redis_port
        # Before redis retitles itself its command line is our argv; afterwards it is "redis-server HOST:PORT".
        return PidFile(self.settings.run_dir / "redis.pid", (f"127.0.0.1:{port}", f"--port {port}"))

    @property
    def store(self) -> Path:
        return self.data_dir

    @property
    def data_dir(self) -> Path:
        return self.settings.home / "redis"

    @property
    def port(self) -> int:
        return self.settings.cache.redis_port

    def serves_this_home(self, process: psutil.Process) -> bool:
        # redis-server retitles itself "redis-server HOST:PORT" and works in its --dir: the folder says whose it is.
        return "redis-server" in process.name() and Path(process.cwd()) == self.data_dir

    @property
    def external(self) -> bool:
        return self.settings.redis_external

    @property
    def url(self) -> str:
        return self.settings.resolved_redis_url

    def unavailable_reason(self) -> str | None:
        if self.binary is None:
            return (
                f"'{self.settings.cache.redis_server_bin}' not found; caches run in-process "
                "(`make setup` installs redis-server with apt when FLUX_ALLOW_APT=true)"
            )
        return None

    def _ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        if self.binary is None:
            raise ServiceStartError(self.unavailable_reason() or "redis-server not found")
        if self.is_running():
            return
        data_dir = self.data_dir
        argv = [
            self.binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.settings.cache.redis_port),
            "--dir",
            str(data_dir),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            # Caches only: snapshot now and then so a restart keeps warm entries, no AOF.
            "--save",
            "300 10",
            "--appendonly",
            "no",
        ]
        self.spawn_and_wait(argv, self._ping, data_dir=data_dir)
