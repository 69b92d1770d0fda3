"""Process bookkeeping shared by the service launchers: PID files, detached spawns, readiness waits."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil


class ServiceStartError(RuntimeError):
    """A service did not become ready; the message names its log file."""


@dataclass(frozen=True)
class PidFile:
    """A PID file plus markers, one of which must appear in the process command line, so a recycled PID that
    now belongs to some other program is never mistaken for our service (and never killed)."""

    path: Path
    cmdline_markers: tuple[str, ...]

    def read(self) -> int | None:
        try:
            return int(self.path.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def live_pid(self) -> int | None:
        pid = self.read()
        return pid if pid is not None and self.is_ours(pid) else None

    def is_ours(self, pid: int) -> bool:
        """A live process whose command line carries one of the markers."""
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            cmdline = " ".join(proc.cmdline())
            return any(marker in cmdline for marker in self.cmdline_markers)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False

    def write(self, pid: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(f"{pid}\n")

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def spawn_detached(
    argv: Sequence[str], log_path: Path, env: dict[str, str] | None = None, **popen_kwargs: Any
) -> subprocess.Popen:
    """Start a long-running server in its own session so it outlives the CLI that started it.

    Readiness waits use the returned handle's `poll()` to notice an early exit: right after the fork the
    child's command line is still ours, so a command-line check would misreport it as dead."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            **popen_kwargs,
        )
    return proc


def stop_pid(pid: int, timeout: float = 60.0) -> None:
    """SIGTERM, wait, then SIGKILL: servers get the chance to flush before we insist."""
    try:
        proc = psutil.Process(pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=timeout)
    except psutil.NoSuchProcess:
        return
    except psutil.TimeoutExpired:
        os.kill(pid, signal.SIGKILL)
        psutil.wait_procs([psutil.Process(pid)], timeout=10)


def wait_until(
    ready: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    log_path: Path,
    alive: Callable[[], bool] | None = None,
    interval: float = 0.25,
) -> float:
    """Poll `ready` until it holds; fail fast if the process died. Returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if ready():
            return time.monotonic() - start
        if alive is not None and not alive():
            raise ServiceStartError(f"{what} exited during start-up; see {log_path}")
        time.sleep(interval)
    raise ServiceStartError(f"{what} was not ready after {timeout:.0f}s; see {log_path}")


def tail(path: Path, lines: int = 5) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""


def port_owner(port: int) -> int | None:
    """The pid listening on TCP `port` of 127.0.0.1 (or of every address); None when none is, or it cannot be seen."""
    for conn in psutil.net_connections(kind="tcp"):
        listening = conn.status == psutil.CONN_LISTEN and bool(conn.laddr) and conn.laddr.port == port
        if listening and conn.laddr.ip in ("127.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1"):
            return conn.pid
    return None


def port_taken(port: int) -> bool:
    """Something accepts connections on 127.0.0.1:`port` (whoever owns it, seen or not)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def describe_pid(pid: int | None) -> str:
    """`pid 123 (redis-server 127.0.0.1:56379)`, or `a process this user cannot see` when the pid is unknown."""
    if pid is None:
        return "a process this user cannot see"
    try:
        return f"pid {pid} ({' '.join(psutil.Process(pid).cmdline())[:120]})"
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return f"pid {pid}"


class StackBusyError(ServiceStartError):
    """Another `flux stack up` or `down` of the same FLUX_HOME held the lock for longer than the wait."""


@contextmanager
def stack_lock(run_dir: Path, timeout: float) -> Iterator[None]:
    """One `flux stack up` or `down` per FLUX_HOME at a time: a second one waits, then finds the services the first
    started (the kernel drops the lock when its holder exits, however it exits)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "stack.lock"
    with path.open("a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StackBusyError(
                        f"another `flux stack up` or `down` of this FLUX_HOME still holds {path} after {timeout:.0f}s"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def children(pid: int) -> list[psutil.Process]:
    try:
        found: list[psutil.Process] = psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []
    return found


def stop_left_behind(processes: list[psutil.Process], grace_s: float = 10.0) -> list[psutil.Process]:
    """Kill the code processes that outlive their server. Dagster's code process ignores SIGTERM and waits for its
    launched runs to be cleared before it exits; when it cannot clear one (the instance's database is gone), it
    would wait forever, holding a loaded location's memory. A run it launched is a process of its own, left running.
    Returns the processes it killed."""
    alive: list[psutil.Process] = psutil.wait_procs(processes, timeout=grace_s)[1]
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(alive, timeout=grace_s)
    return alive
