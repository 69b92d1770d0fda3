"""Redis for caches. A cache that is down never fails a query: `get_client` returns None instead."""

from __future__ import annotations

import dagster as dg
import redis
from pydantic import Field


class RedisResource(dg.ConfigurableResource):
    url: str = Field(description="redis:// URL (FLUX_REDIS_URL)")

    def get_client(self) -> redis.Redis | None:
        client = redis.Redis.from_url(self.url, socket_timeout=1.0, socket_connect_timeout=1.0)
        try:
            client.ping()
        except redis.RedisError:
            return None
        return client
