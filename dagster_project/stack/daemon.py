"""The Dagster daemon: the nightly schedule, the sensors, declarative automation, freshness, and the run queue.

`flux stack up` starts it beside the databases (FLUX_DAGSTER_DAEMON=false leaves it out), so a platform set up by
`make run` refreshes itself at night and the UI (`make dagster`) shows its ticks. It reads the Flux code location
from the stack's code server (the workspace file written next to dagster.yaml names its socket), so it loads no
code of its own; the runs it launches go through that server.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import psutil

from dagster_project.core.settings import as_environment
from dagster_project.ops.instance import render_dagster_home
from dagster_project.stack.base import ProcessService
from dagster_project.stack.process import PidFile, ServiceStartError, spawn_detached, stop_pid, tail, wait_until


class DagsterDaemonService(ProcessService):
    name = "dagster-daemon"
    url_variable = "DAGSTER_HOME"
    stop_timeout = 60.0  # it finishes a tick

    @property
    def pidfile(self) -> PidFile:
        return PidFile(self.settings.run_dir / "dagster-daemon.pid", ("dagster-daemon",))

    def serves_this_home(self, process: psutil.Process) -> bool:
        # `dagster-daemon run -w <DAGSTER_HOME>/workspace.yaml`: the workspace file names the instance it serves.
        argv = " ".join(process.cmdline())
        return "dagster-daemon" in argv and f" run -w {self.settings.dagster_home / 'workspace.yaml'}" in argv

    @property
    def external(self) -> bool:
        return False

    @property
    def url(self) -> str:
        return str(self.settings.dagster_home)

    def unavailable_reason(self) -> str | None:
        if not self.settings.ops.dagster_daemon:
            return "FLUX_DAGSTER_DAEMON=false: no schedule, sensor or automation runs until a daemon is started"
        return None

    def start(self) -> None:
        if self.is_running():
            return
        home = Path(render_dagster_home(self.settings))
        argv = [self._binary, "run", "-w", str(home / "workspace.yaml"), "--log-level", "warning"]
        env = self._env()
        self._cli("wipe", env)
        # As the user who runs the assets (not the databases' service user): it launches their runs.
        proc = spawn_detached(argv, self.log_path, env=env)
        self.pidfile.write(proc.pid)
        try:
            wait_until(
                lambda: self._live(env),
                timeout=self.settings.service_start_timeout,
                what=self.name,
                log_path=self.log_path,
                alive=lambda: proc.poll() is None,
                interval=1.0,
            )
        except ServiceStartError as exc:
            stop_pid(proc.pid, timeout=20)
            self.pidfile.clear()
            raise ServiceStartError(f"{exc}\n{tail(self.log_path)}") from None

    def stop(self) -> bool:
        """Stop it and wipe its heartbeats, so `flux materialize` never queues a run for a daemon that is gone."""
        stopped = super().stop()
        if stopped:
            self._cli("wipe", self._env())
        return stopped

    def _env(self) -> dict[str, str]:
        return as_environment(self.settings) | {"DAGSTER_HOME": str(self.settings.dagster_home)}

    def _live(self, env: dict[str, str]) -> bool:
        """Dagster's own check: every daemon the instance needs (scheduler, sensors, queue, freshness…) has sent
        a heartbeat lately. Heartbeats are wiped before the start, so only this daemon's count."""
        return self._cli("liveness-check", env) == 0

    def _cli(self, command: str, env: dict[str, str]) -> int:
        return subprocess.run(
            [self._binary, command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60
        ).returncode

    @property
    def _binary(self) -> str:
        return shutil.which("dagster-daemon", path=str(Path(sys.executable).parent)) or "dagster-daemon"
