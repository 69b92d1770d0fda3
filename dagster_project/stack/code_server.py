"""The Flux code location's one code server: `dagster code-server start` over a Unix socket under FLUX_HOME.

`flux stack up` starts it before the daemon. The daemon, the UI (`make dagster`) and `flux materialize` all read the
location from it, so the definitions are loaded once per stack instead of once per command and again by the daemon
every minute; runs are launched by it, with the environment it was started with plus the settings each run
carries (core/run_settings.py). When the code under it changes, the next command reloads it (`reload_if_changed`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from dagster._grpc.client import DagsterGrpcClient

from dagster_project.core.files import write_private
from dagster_project.core.run_settings import location_settings
from dagster_project.core.settings import PACKAGE_DIR, REPO_ROOT, as_environment
from dagster_project.ops.instance import DEFINITIONS_MODULE, LOCATION_NAME, code_server_socket, render_dagster_home
from dagster_project.stack.base import ProcessService, ServiceState, ServiceStatus
from dagster_project.stack.process import (
    PidFile,
    ServiceStartError,
    children,
    spawn_detached,
    stop_left_behind,
    stop_pid,
    tail,
    wait_until,
)

# The packages whose modules the location imports, and the dbt manifest its dbt assets are built from.
CODE_ROOTS = (PACKAGE_DIR, PACKAGE_DIR.parent / "retrieval", REPO_ROOT / "dbt" / "target" / "manifest.json")
LOAD_TIMEOUT_S = 180
SHOWN_SETTINGS = ("source_mode", "raw_root", "tuning_preset")  # what `flux stack status` says runs read


class CodeServerService(ProcessService):
    name = "code-server"
    url_variable = "DAGSTER_HOME"
    stop_timeout = 30.0

    @property
    def socket(self) -> Path:
        return code_server_socket(self.settings)

    @property
    def pidfile(self) -> PidFile:
        return PidFile(self.settings.run_dir / "code-server.pid", ("code-server start",))

    @property
    def fingerprint_file(self) -> Path:
        return self.settings.run_dir / "code-server.code"

    @property
    def settings_file(self) -> Path:
        """The settings it was started with, as the location publishes them (no secret in clear)."""
        return self.settings.run_dir / "code-server.settings.json"

    def started_with(self) -> dict[str, str]:
        try:
            return dict(json.loads(self.settings_file.read_text()))
        except (FileNotFoundError, ValueError):
            return {}

    def status(self) -> ServiceStatus:
        """Running, with what its runs read unless they carry other values: source mode, raw root, preset."""
        status = super().status()
        values = self.started_with()
        if status.state is not ServiceState.RUNNING or not values:
            return status
        shown = {name: json.loads(values.get(f"FLUX_{name.upper()}", "null")) for name in SHOWN_SETTINGS}
        raw_root = shown["raw_root"] or str(self.settings.home / "raw")
        detail = f"{shown['source_mode']} pulls under {raw_root}, tuning preset {shown['tuning_preset']}"
        return ServiceStatus(status.name, status.state, status.url, f"{status.detail} {detail}".strip())

    def refresh(self) -> str | None:
        """A running server started with other settings is restarted with these; one whose code changed since it
        loaded is reloaded."""
        if self.started_with() != location_settings(self.settings):
            self.stop()
            self.start()
            return "restarted with this command's settings"
        if self.reload_if_changed():
            return "reloaded: the code changed"
        return None

    def serves_this_home(self, process: psutil.Process) -> bool:
        argv = " ".join(process.cmdline())
        return "code-server start" in argv and f"--socket {self.socket}" in argv

    @property
    def external(self) -> bool:
        return False

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def is_running(self) -> bool:
        return super().is_running() and self.socket.exists()

    def start(self) -> None:
        if self.is_running():
            return
        env = as_environment(self.settings) | {"DAGSTER_HOME": render_dagster_home(self.settings)}
        self.socket.unlink(missing_ok=True)  # left by a server that was killed
        fingerprint = code_fingerprint()
        argv = [
            self._binary,
            "code-server",
            "start",
            "-m",
            DEFINITIONS_MODULE,
            "--location-name",
            LOCATION_NAME,
            "--socket",
            str(self.socket),
            "--log-level",
            "warning",
            "--startup-timeout",
            str(LOAD_TIMEOUT_S),
        ]
        # As the user who runs the assets (not the databases' service user): its run workers execute them.
        proc = spawn_detached(argv, self.log_path, env=env)
        self.pidfile.write(proc.pid)
        try:
            wait_until(
                self._answers,
                timeout=max(self.settings.service_start_timeout, LOAD_TIMEOUT_S),
                what=self.name,
                log_path=self.log_path,
                alive=lambda: proc.poll() is None,
                interval=0.5,
            )
        except ServiceStartError as exc:
            stop_pid(proc.pid, timeout=10)
            self.pidfile.clear()
            raise ServiceStartError(f"{exc}\n{tail(self.log_path)}") from None
        self.fingerprint_file.write_text(fingerprint)
        write_private(self.settings_file, json.dumps(location_settings(self.settings), sort_keys=True))

    def stop(self) -> bool:
        """Ask it to shut down (it stops its own code process); the pid is stopped only if it does not."""
        pid = self.pidfile.live_pid() or self.home_holder()
        self.pidfile.clear()
        self.fingerprint_file.unlink(missing_ok=True)
        self.settings_file.unlink(missing_ok=True)
        if pid is None:
            return False
        code_processes = children(pid)
        try:
            self._client().shutdown_server(timeout=10)
            psutil.Process(pid).wait(timeout=self.stop_timeout)
        except Exception:  # not answering, or not stopping: stop the pid
            stop_pid(pid, timeout=10)
        stop_left_behind(code_processes)
        self.socket.unlink(missing_ok=True)
        return True

    def reload_if_changed(self) -> bool:
        """Reload the location when the code under it changed since it was loaded; True when it reloaded."""
        fingerprint = code_fingerprint()
        try:
            loaded = self.fingerprint_file.read_text()
        except FileNotFoundError:
            loaded = ""
        if loaded == fingerprint:
            return False
        self._client().reload_code(timeout=LOAD_TIMEOUT_S)
        self.fingerprint_file.write_text(fingerprint)
        return True

    def _answers(self) -> bool:
        """The server answers once its code process has loaded the location (or failed to: the error is then
        the location's, reported by whoever reads it)."""
        if not self.socket.exists():
            return False
        try:
            self._client().ping("flux")
        except Exception:  # not up yet: grpc raises its own errors
            return False
        return True

    def _client(self) -> DagsterGrpcClient:
        from dagster._grpc.client import DagsterGrpcClient

        return DagsterGrpcClient(port=None, socket=str(self.socket))

    @property
    def _binary(self) -> str:
        return shutil.which("dagster", path=str(Path(sys.executable).parent)) or "dagster"


def code_fingerprint(roots: Sequence[Path] = CODE_ROOTS) -> str:
    """What the location is built from, by file name, size and modification time: any edit changes it."""
    digest = hashlib.sha256()
    for root in roots:
        paths = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in paths:
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()
