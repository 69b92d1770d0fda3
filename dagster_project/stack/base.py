"""What every local service launcher provides, and the status vocabulary `flux stack status` prints."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path

import psutil

from dagster_project.core.settings import FluxSettings
from dagster_project.stack.privileges import ServiceUser, hand_over, service_user
from dagster_project.stack.process import (
    PidFile,
    ServiceStartError,
    describe_pid,
    port_owner,
    port_taken,
    spawn_detached,
    stop_pid,
    tail,
    wait_until,
)


class ServiceState(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"
    EXTERNAL = "external"
    UNAVAILABLE = "unavailable"
    CONFLICT = "conflict"  # running, but not where the settings say (another port), or its port held by another


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

    def conflict(self) -> str | None:
        """Why the server that runs is not the one the settings name (another port), or why none can start here
        (its port held by another program): one line naming what holds it and the variable to change."""
        return None

    def refresh(self) -> str | None:
        """For a server that already runs: bring it in line with the settings (and code) it should serve; what it
        did, or None when it was current."""
        return None

    def adopt(self) -> bool:
        """Before a start: take over a server of ours for this FLUX_HOME that runs untracked (True), or raise
        ServiceStartError naming what holds the port or data folder (False: free to start)."""
        return False

    def status(self) -> ServiceStatus:
        if self.external:
            return ServiceStatus(self.name, ServiceState.EXTERNAL, self.redacted_url)
        reason = self.unavailable_reason()
        if reason:
            return ServiceStatus(self.name, ServiceState.UNAVAILABLE, self.redacted_url, reason)
        conflict = self.conflict()
        if conflict:
            return ServiceStatus(self.name, ServiceState.CONFLICT, self.redacted_url, conflict)
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
    """A server we run as a detached child process tracked by a PID file (Neo4j, Redis, the Dagster daemon).

    A server of ours is known by what it serves (its data folder or workspace under FLUX_HOME, `serves_this_home`),
    so one whose PID file was lost is found and adopted rather than started twice; and by the port it owns, so
    readiness and status judge the process itself, not a reply that another server could give."""

    stop_timeout: float = 20.0
    port_variable: str | None = None

    @property
    @abstractmethod
    def pidfile(self) -> PidFile: ...

    @property
    def port(self) -> int | None:
        """The TCP port of 127.0.0.1 it listens on (None: it listens on none)."""
        return None

    @abstractmethod
    def serves_this_home(self, process: psutil.Process) -> bool:
        """True for a process of ours that serves this FLUX_HOME's data (on whatever port)."""

    @property
    def store(self) -> Path | None:
        """The folder its data lives in, when it has one (it must outlive the process)."""
        return None

    def store_gone(self, pid: int) -> str | None:
        """Why a running server of ours cannot be used: its data folder was deleted under it (`rm -rf .flux` while
        it ran). It would still answer, from files that no longer exist, and refuse the new store's credentials."""
        if self.store is None or self.store.exists():
            return None
        return (
            f"{describe_pid(pid)} still serves {self.settings.home}, but its data folder {self.store} was deleted "
            f"under it: stop it (`kill {pid}`), then `flux stack up` starts a new one"
        )

    def is_running(self) -> bool:
        return self.pidfile.live_pid() is not None

    def home_holder(self) -> int | None:
        """The pid of a server of ours serving this FLUX_HOME, tracked or not."""
        for process in psutil.process_iter():
            try:
                if process.status() != psutil.STATUS_ZOMBIE and self.serves_this_home(process):
                    return process.pid
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return None

    def conflict(self) -> str | None:
        pid = self.pidfile.live_pid() or self.home_holder()
        if pid is not None and (gone := self.store_gone(pid)):
            return gone
        if self.port is None:
            return None
        owner = port_owner(self.port)
        if pid is not None:
            if owner is not None and owner != pid:
                return f"{describe_pid(pid)} runs, but 127.0.0.1:{self.port} is held by {describe_pid(owner)}"
            if owner is None and not port_taken(self.port):
                return f"{describe_pid(pid)} runs, but nothing listens on 127.0.0.1:{self.port} ({self.port_variable})"
            return None
        if port_taken(self.port):
            return f"127.0.0.1:{self.port} is held by {describe_pid(owner)}; stop it or set {self.port_variable}"
        return None

    def status(self) -> ServiceStatus:
        status = super().status()
        if status.state is ServiceState.STOPPED and (holder := self.home_holder()) is not None:
            detail = f"untracked {describe_pid(holder)}: `flux stack up` adopts it"
            return ServiceStatus(self.name, ServiceState.RUNNING, status.url, detail)
        return status

    def adopt(self) -> bool:
        holder = self.home_holder()
        if holder is None:
            if self.port is not None and port_taken(self.port):
                raise ServiceStartError(
                    f"{self.name}: 127.0.0.1:{self.port} is held by {describe_pid(port_owner(self.port))}; stop it "
                    f"or set {self.port_variable} to a free port"
                )
            return False
        if gone := self.store_gone(holder):
            raise ServiceStartError(f"{self.name}: {gone}")
        if self.port is not None and port_owner(self.port) != holder:
            raise ServiceStartError(
                f"{self.name}: {describe_pid(holder)} serves this FLUX_HOME ({self.settings.home}) but does not "
                f"listen on 127.0.0.1:{self.port}; stop it, or set {self.port_variable} to the port it listens on"
            )
        self.pidfile.write(holder)
        return True

    def owns_port(self, pid: int) -> bool:
        """The process started owns its port: readiness is never judged by a reply from another server."""
        return self.port is None or port_owner(self.port) == pid

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
                lambda: self.owns_port(proc.pid) and ready(),
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
        pid = self.pidfile.live_pid() or self.home_holder()  # a lost PID file does not keep it running
        self.pidfile.clear()
        if pid is None:
            return False
        stop_pid(pid, timeout=self.stop_timeout)
        return True
