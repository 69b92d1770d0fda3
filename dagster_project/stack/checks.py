"""One connection to each database, or one line saying why not: what every command checks before it works, and
what the serving layer and the evals import without the service launchers (and their Dagster code server)."""

from __future__ import annotations

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.stack.postgres import connect_or_explain


def check_postgres(settings: FluxSettings) -> None:
    """Open and close one connection to the platform database, or raise a one-line FluxConfigError."""
    from sqlalchemy.engine import make_url

    conninfo = make_url(settings.platform_database_url).set(drivername="postgresql")
    with connect_or_explain(conninfo.render_as_string(hide_password=False)) as conn:
        conn.execute("SELECT 1")


def check_neo4j(settings: FluxSettings) -> None:
    """Verify Bolt connectivity and credentials, or raise a one-line FluxConfigError."""
    from neo4j import GraphDatabase
    from neo4j import exceptions as neo4j_errors

    auth = settings.neo4j_auth
    try:
        with GraphDatabase.driver(
            settings.resolved_neo4j_uri, auth=auth, connection_timeout=5, notifications_min_severity="OFF"
        ) as driver:
            driver.verify_connectivity()
    except neo4j_errors.AuthError:
        raise FluxConfigError("FLUX_NEO4J_PASSWORD", "Neo4j rejected the credentials") from None
    except neo4j_errors.ClientError as exc:
        if "AuthenticationRateLimit" in (exc.code or ""):
            raise FluxConfigError(
                "FLUX_NEO4J_PASSWORD",
                f"Neo4j at {settings.resolved_neo4j_uri} refuses logins for now: it saw too many with wrong "
                "credentials in a row (AuthenticationRateLimit). Something still logs in with an old password "
                "(a process of an earlier stack on this port?); stop it, wait a minute and retry",
            ) from None
        raise FluxConfigError("FLUX_NEO4J_URI", f"Neo4j refused the connection: {exc.code}: {exc.message}") from None
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.DriverError, OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FluxConfigError(
            "FLUX_NEO4J_URI", f"Neo4j is not reachable at {settings.resolved_neo4j_uri}: {first}"
        ) from None
