"""Process bookkeeping shared by the service launchers: PID files, detached spawns, readiness waits."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
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
        if pid is None:
            return None
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            cmdline = " ".join(proc.cmdline())
            if any(marker in cmdline for marker in self.cmdline_markers):
                return pid
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
        return None

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


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


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
