"""Redis for caches. A cache that is down never fails a query: `get_client` returns None instead."""

import dagster as dg
import redis

from dagster_project.core.settings import FluxSettings


class RedisResource(dg.ConfigurableResource):
    """The cache at FLUX_REDIS_URL (or the embedded server), from the settings resource."""

    settings: dg.ResourceDependency[FluxSettings]

    def get_client(self) -> redis.Redis | None:
        client = redis.Redis.from_url(self.settings.resolved_redis_url, socket_timeout=1.0, socket_connect_timeout=1.0)
        try:
            client.ping()
        except redis.RedisError:
            return None
        return client
