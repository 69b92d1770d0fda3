"""Neo4j Community 5.26 LTS, embedded in a one-class Java launcher with a Bolt connector on 127.0.0.1.

The launcher's pom.xml (neo4j_launcher/) resolves Neo4j from Maven Central; `make setup` builds it once.
Data lives under FLUX_HOME/neo4j; the Python `neo4j` driver talks to it over Bolt like any other server.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psutil

from dagster_project.stack.base import ProcessService
from dagster_project.stack.privileges import own_file
from dagster_project.stack.process import PidFile, ServiceStartError

LAUNCHER_DIR = Path(__file__).resolve().parent / "neo4j_launcher"
LAUNCHER_CLASS = "flux.neo4j.Neo4jLauncher"
READY_MARKER = "flux-neo4j: ready"

# Neo4j on JDK 17 wants these opened for its off-heap memory and unsafe access.
JVM_OPENS = [
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
]


def launcher_built() -> bool:
    jar_dir = LAUNCHER_DIR / "target"
    cls = jar_dir / "classes" / "flux" / "neo4j" / "Neo4jLauncher.class"
    if not cls.exists() or not (jar_dir / "lib").is_dir():
        return False
    sources = [LAUNCHER_DIR / "pom.xml", *LAUNCHER_DIR.glob("src/**/*.java")]
    return all(src.stat().st_mtime <= cls.stat().st_mtime for src in sources)


def build_launcher(log_path: Path) -> None:
    """Resolve Neo4j from Maven Central and compile the launcher (a no-op when already built)."""
    if launcher_built():
        return
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ServiceStartError("Maven (mvn) is needed to build the Neo4j launcher; install maven and Java 17")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        result = subprocess.run([mvn, "-B", "-q", "package"], cwd=LAUNCHER_DIR, stdout=log, stderr=log)
    if result.returncode != 0:
        raise ServiceStartError(f"building the Neo4j launcher failed; see {log_path}")


class Neo4jService(ProcessService):
    name = "neo4j"
    stop_timeout = 60.0
    url_variable = "FLUX_NEO4J_URI"
    port_variable = "FLUX_NEO4J_BOLT_PORT"

    @property
    def store(self) -> Path:
        return self.data_dir

    @property
    def data_dir(self) -> Path:
        return self.settings.home / "neo4j"

    @property
    def pidfile(self) -> PidFile:
        return PidFile(self.settings.run_dir / "neo4j.pid", (LAUNCHER_CLASS,))

    @property
    def port(self) -> int:
        return self.settings.graph.neo4j_bolt_port

    def serves_this_home(self, process: psutil.Process) -> bool:
        # One JVM per store: a second one on the same --home fails on Neo4j's store_lock, whatever its port.
        argv = process.cmdline()
        return (
            LAUNCHER_CLASS in argv and "--home" in argv and argv[argv.index("--home") + 1 :][:1] == [str(self.data_dir)]
        )

    @property
    def external(self) -> bool:
        return self.settings.neo4j_external

    @property
    def url(self) -> str:
        return self.settings.resolved_neo4j_uri

    def _password_file(self) -> Path:
        """The initial password, readable by the server's account alone."""
        path = self.settings.run_dir / "neo4j.password"
        own_file(path, self.run_as)
        path.write_text(self.settings.graph.neo4j_password.get_secret_value())
        return path

    def start(self) -> None:
        if self.is_running():
            return
        build_launcher(self.settings.logs_dir / "neo4j-build.log")
        java = shutil.which("java")
        if java is None:
            raise ServiceStartError("Java 17 is needed to run Neo4j (java not on PATH)")
        target = LAUNCHER_DIR / "target"
        password_file = self._password_file()
        argv = [
            java,
            f"-Xmx{self.settings.graph.neo4j_heap}",
            *JVM_OPENS,
            "-cp",
            f"{target / 'classes'}:{target / 'lib'}/*",
            LAUNCHER_CLASS,
            "--home",
            str(self.data_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.settings.graph.neo4j_bolt_port),
            "--pagecache-mb",
            str(self.settings.graph.neo4j_pagecache_mb),
            "--password-file",
            str(password_file),
        ]
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0

        def ready() -> bool:
            with self.log_path.open("rb") as fh:
                fh.seek(offset)
                return READY_MARKER.encode() in fh.read()

        self.spawn_and_wait(argv, ready, data_dir=self.data_dir, reads=[target / "lib", password_file])
