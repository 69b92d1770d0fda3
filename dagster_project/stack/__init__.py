"""The one local-services launcher: `flux stack up|down|status`, the Makefile and the tests all use it."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager

from dagster_project.core.settings import FluxSettings, dbt_env
from dagster_project.stack.base import LocalService, ServiceState, ServiceStatus
from dagster_project.stack.checks import check_neo4j, check_postgres
from dagster_project.stack.code_server import CodeServerService
from dagster_project.stack.daemon import DagsterDaemonService
from dagster_project.stack.neo4j import Neo4jService
from dagster_project.stack.postgres import PostgresService, ensure_databases
from dagster_project.stack.process import ServiceStartError, stack_lock
from dagster_project.stack.redis import RedisService

__all__ = [
    "ServiceStartError",
    "ServiceState",
    "ServiceStatus",
    "Stack",
    "check_neo4j",
    "check_postgres",
]


class Stack:
    """Embedded Postgres, Neo4j and Redis, started only where no external URL names a server, the code location's
    code server, and the Dagster daemon (last: it keeps its state in Postgres, reads the location from the code
    server, and its runs reach the others)."""

    def __init__(self, settings: FluxSettings) -> None:
        self.settings = settings
        self.postgres = PostgresService(settings)
        self.neo4j = Neo4jService(settings)
        self.redis = RedisService(settings)
        self.code_server = CodeServerService(settings)
        self.daemon = DagsterDaemonService(settings)

    @property
    def services(self) -> list[LocalService]:
        return [self.postgres, self.neo4j, self.redis, self.code_server, self.daemon]

    def up(self) -> list[ServiceStatus]:
        """Start what is not running, adopt what runs untracked, verify what is external; return each service's
        state and start time. One `up` or `down` per FLUX_HOME at a time (a second waits, then finds them running).
        The code server and then the daemon need only Postgres, so they start beside Neo4j and Redis (the location's
        load takes as long as a Neo4j start)."""
        with self._lock():
            results = [self._up_one(self.postgres)]
            with ThreadPoolExecutor(max_workers=1) as pool:
                dagster = pool.submit(lambda: [self._up_one(self.code_server), self._up_one(self.daemon)])
                results += [self._up_one(self.neo4j), self._up_one(self.redis)]
                results += dagster.result()  # their ServiceStartError, if any, is raised here
        return results

    def _lock(self) -> AbstractContextManager[None]:
        # Long enough for another `up` to start everything (each service has service_start_timeout).
        return stack_lock(self.settings.run_dir, timeout=4 * self.settings.service_start_timeout)

    def _up_one(self, service: LocalService) -> ServiceStatus:
        status = service.status()
        if status.state is ServiceState.UNAVAILABLE:
            return status
        elapsed: float | None = None
        detail = "already running"
        if status.state is ServiceState.EXTERNAL:
            detail = "external, reachable"
        elif not service.is_running():
            if service.adopt():
                detail = "running (adopted)"
            else:
                started = time.monotonic()
                service.start()
                elapsed, detail = time.monotonic() - started, "started"
        elif status.state is ServiceState.CONFLICT:
            raise ServiceStartError(f"{service.name}: {status.detail}")
        elif (refreshed := service.refresh()) is not None:
            detail = refreshed
        self._verify(service)
        final_state = ServiceState.EXTERNAL if service.external else ServiceState.RUNNING
        return ServiceStatus(service.name, final_state, service.redacted_url, detail, elapsed)

    def _verify(self, service: LocalService) -> None:
        if service is self.postgres:
            if service.external:
                check_postgres(self.settings)
            ensure_databases(self.settings)
        elif service is self.neo4j:
            check_neo4j(self.settings)

    def down(self) -> list[ServiceStatus]:
        with self._lock():
            return self._down()

    def _down(self) -> list[ServiceStatus]:
        results = []
        for service in reversed(self.services):
            if service.external:
                results.append(ServiceStatus(service.name, ServiceState.EXTERNAL, service.redacted_url, "left alone"))
                continue
            stopped = service.stop()
            results.append(
                ServiceStatus(
                    service.name,
                    ServiceState.STOPPED,
                    service.redacted_url,
                    "stopped" if stopped else "was not running",
                )
            )
        return results

    def status(self) -> list[ServiceStatus]:
        return [service.status() for service in self.services]

    def running_urls(self) -> dict[str, str]:
        """FLUX_* URL variables for every service that is running or external (for `flux env`)."""
        env: dict[str, str] = {}
        states = {s.name: s.state for s in self.status()}
        live = {ServiceState.RUNNING, ServiceState.EXTERNAL}
        if states["postgres"] in live:
            env["FLUX_DATABASE_URL"] = self.settings.platform_database_url
            env["FLUX_MLFLOW_TRACKING_URI"] = self.settings.resolved_mlflow_tracking_uri
            env |= dbt_env(self.settings)
        if states["neo4j"] in live:
            env["FLUX_NEO4J_URI"] = self.settings.resolved_neo4j_uri
            env["FLUX_NEO4J_USER"] = self.settings.graph.neo4j_user
            env["FLUX_NEO4J_PASSWORD"] = self.settings.graph.neo4j_password.get_secret_value()
        if states["redis"] in live:
            env["FLUX_REDIS_URL"] = self.settings.resolved_redis_url
        env["DAGSTER_HOME"] = str(self.settings.dagster_home)
        return env
