"""Ray: join RAY_ADDRESS when set, else start a local cluster whose temp dir lives under FLUX_HOME."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import dagster as dg
from pydantic import Field

# Ray puts Unix sockets under its temp dir; AF_UNIX paths are limited to 107 bytes, and Ray appends ~70.
_MAX_TEMP_DIR_LEN = 35


def ray_temp_dir(preferred: Path) -> str:
    """The temp dir under FLUX_HOME if its path is short enough for Ray's sockets, else a short /tmp path
    keyed by FLUX_HOME (so two checkouts never share one)."""
    preferred = preferred.resolve()
    if len(str(preferred)) <= _MAX_TEMP_DIR_LEN:
        return str(preferred)
    digest = hashlib.sha256(str(preferred).encode()).hexdigest()[:10]
    return str(Path(tempfile.gettempdir()) / f"flux-ray-{digest}")


def ensure_ray(address: str | None, num_cpus: int, temp_dir: Path) -> dict[str, object]:
    """Initialise Ray once per process; returns the cluster resources it sees."""
    import logging

    import ray

    if not ray.is_initialized():
        # Local clusters here are single-user and loopback-only; token auth would write ~/.ray.
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            temp = ray_temp_dir(temp_dir)
            Path(temp).mkdir(parents=True, exist_ok=True)
            ray.init(
                num_cpus=num_cpus,
                _temp_dir=temp,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        logging.getLogger("ray.data").setLevel(logging.WARNING)
    return dict(ray.cluster_resources())


class RayResource(dg.ConfigurableResource):
    address: str = Field(default="", description="FLUX_RAY_ADDRESS or RAY_ADDRESS; empty = local cluster")
    num_cpus: int = Field(default=2, description="FLUX_RAY_NUM_CPUS for a local cluster")
    temp_dir: str = Field(description="FLUX_HOME/ray")

    def ensure(self) -> dict[str, object]:
        return ensure_ray(self.address or None, self.num_cpus, Path(self.temp_dir))
