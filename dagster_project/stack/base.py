"""What every local service launcher provides, and the status vocabulary `flux stack status` prints."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from dagster_project.core.settings import FluxSettings
from dagster_project.stack.privileges import ServiceUser, hand_over, service_user
from dagster_project.stack.process import PidFile, ServiceStartError, spawn_detached, stop_pid, tail, wait_until


class ServiceState(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"
    EXTERNAL = "external"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    state: ServiceState
    url: str
    detail: str = ""
    start_seconds: float | None = None


class LocalService(ABC):
    """A server that `flux stack up` may start on 127.0.0.1 with its data under FLUX_HOME."""

    name: str
    url_variable: str

    def __init__(self, settings: FluxSettings) -> None:
        self.settings = settings

    @property
    def log_path(self) -> Path:
        return self.settings.logs_dir / f"{self.name}.log"

    @cached_property
    def run_as(self) -> ServiceUser | None:
        """The unprivileged account this server runs as when we are root; None when we are not."""
        return service_user(self.settings.service_user, home=self.settings.home / "service-home")

    @property
    @abstractmethod
    def external(self) -> bool: ...

    @property
    @abstractmethod
    def url(self) -> str: ...

    @abstractmethod
    def is_running(self) -> bool: ...

    @abstractmethod
    def start(self) -> None:
        """Start and wait for readiness; raise ServiceStartError naming the log file on failure."""

    @abstractmethod
    def stop(self) -> bool:
        """Stop the server we started; return False if nothing was running."""

    def unavailable_reason(self) -> str | None:
        """Why this service cannot be had on this machine (None when it can)."""
        return None

    def status(self) -> ServiceStatus:
        if self.external:
            return ServiceStatus(self.name, ServiceState.EXTERNAL, self.redacted_url)
        reason = self.unavailable_reason()
        if reason:
            return ServiceStatus(self.name, ServiceState.UNAVAILABLE, self.redacted_url, reason)
        state = ServiceState.RUNNING if self.is_running() else ServiceState.STOPPED
        return ServiceStatus(self.name, state, self.redacted_url)

    @property
    def redacted_url(self) -> str:
        from sqlalchemy.engine import make_url

        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # not an SQLAlchemy-shaped URL (bolt://, redis://)
            return self.url


class ProcessService(LocalService):
    """A server we run as a detached child process tracked by a PID file (Neo4j, Redis)."""

    stop_timeout: float = 20.0

    @property
    @abstractmethod
    def pidfile(self) -> PidFile: ...

    def is_running(self) -> bool:
        return self.pidfile.live_pid() is not None

    def spawn_and_wait(
        self, argv: list[str], ready: Callable[[], bool], data_dir: Path, reads: Sequence[Path] = ()
    ) -> None:
        """Start `argv` and wait for `ready`; on failure kill it and name the log file. Under root it runs as
        the service user, which owns `data_dir` and can reach the files in `reads`."""
        user = self.run_as
        data_dir.mkdir(parents=True, exist_ok=True)
        if user is None:
            proc = spawn_detached(argv, self.log_path)
        else:
            hand_over(user, data_dir, reads)
            proc = spawn_detached(argv, self.log_path, env=user.env(), **user.popen_kwargs())
        self.pidfile.write(proc.pid)
        try:
            wait_until(
                ready,
                timeout=self.settings.service_start_timeout,
                what=self.name,
                log_path=self.log_path,
                alive=lambda: proc.poll() is None,
            )
        except ServiceStartError as exc:
            stop_pid(proc.pid, timeout=20)
            self.pidfile.clear()
            raise ServiceStartError(f"{exc}\n{tail(self.log_path)}") from None

    def stop(self) -> bool:
        pid = self.pidfile.live_pid()
        self.pidfile.clear()
        if pid is None:
            return False
        stop_pid(pid, timeout=self.stop_timeout)
        return True
