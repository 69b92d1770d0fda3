"""Faults that kill or starve real processes, each ending in a clear failure (or in service that goes on) and a
rerun that converges to the state of a clean run:

- Redis killed with SIGKILL while the HTTP API answers: answers go on from the in-process cache, and the cache
  goes back to Redis by itself once a new server is up on the same port;
- the raw zone full (a 64 KiB tmpfs) or read-only (a tmpfs remounted ro): a clear RawZoneError, no partial file
  left behind, and a rerun on a writable zone writes exactly the files and manifest of a clean run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from dagster_project.settings import FluxSettings
from dagster_project.sources import registry
from dagster_project.sources.raw import RawPull, RawZoneError, write_pull
from dagster_project.stack.redis import RedisService
from retrieval.cache import Cache
from retrieval.pipeline import Pipeline
from serving.api import create_app

QUESTIONS = ["What does TP53 do in apoptosis?", "How does MDM2 regulate p53?", "What is the role of BAX?"]
RETRY = 0.5


# --- Redis killed while serving ----------------------------------------------------------------------------
def test_redis_killed_while_serving_answers_go_on_and_the_cache_reconnects(demo_platform: FluxSettings,
                                                                           redis_service: RedisService) -> None:
    cache = Cache(redis_service.url, embedding_ttl=600, retrieval_ttl=600, answer_ttl=600,
                  semantic_threshold=demo_platform.semantic_cache_threshold, namespace=f"f{uuid.uuid4().hex[:8]}",
                  retry_interval=RETRY)
    pipeline = Pipeline.from_settings(demo_platform, cache=cache)
    with TestClient(create_app(demo_platform, pipeline), raise_server_exceptions=False) as client:
        first = client.post("/query", json={"question": QUESTIONS[0], "mode": "quick"})
        assert first.status_code == 200 and cache.backend == "redis"
        pid = redis_service.pidfile.live_pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        _wait(lambda: redis_service.pidfile.live_pid() is None, "redis-server to die")
        during = [client.post("/query", json={"question": q, "mode": "quick"}) for q in QUESTIONS]
        assert [r.status_code for r in during] == [200, 200, 200]
        assert all(r.json()["citations"] for r in during) and cache.backend == "memory"
        assert during[0].json()["answer"] == first.json()["answer"]
        health = client.get("/health").json()
        assert health["status"] == "degraded" and health["services"]["redis"]["cache_backend"] == "memory"

        redis_service.start()  # a new server on the same port, as a supervisor would restart it
        time.sleep(RETRY * 2)
        after = client.post("/query", json={"question": "What does BBC3 do in apoptosis?", "mode": "quick"})
        assert after.status_code == 200 and cache.backend == "redis"
        assert client.get("/health").json()["services"]["redis"]["cache_backend"] == "redis"
    stored = redis.Redis.from_url(redis_service.url, decode_responses=True).keys(f"{cache.namespace}:ans:*")
    assert stored, "the answer given after the restart is cached in Redis again"
    assert cache.stats()["fallback_switches"] == 1


def _wait(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# --- the raw zone full or read-only --------------------------------------------------------------------------
@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mountpoint = tmp_path / "raw"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mountpoint)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'}); the raw-zone fault "
                    "needs one")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def _raw_zone_state(root: Path) -> tuple[dict[str, str], list[str]]:
    """Data files by relative path and hash, and each manifest with the zone's own root taken out of it (a
    manifest names its files by absolute path, so two zones differ only there)."""
    files = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith("manifest-")}
    manifests = sorted(p.read_text().replace(str(root), "<root>") for p in root.rglob("manifest-*.json"))
    return files, manifests


def _demo_pull(source: str) -> RawPull:
    pull = registry.pull(source, FluxSettings(source_mode="demo"))
    return RawPull(pull.source, pull.files, pull.release, retrieved_at="2026-01-01T00:00:00+00:00")


def test_a_full_raw_zone_fails_clearly_keeps_nothing_partial_and_a_rerun_converges(small_tmpfs: Path,
                                                                                   tmp_path: Path) -> None:
    pull = _demo_pull("openalex")
    assert sum(len(b) for b in pull.files.values()) > 64 * 1024, "the pull must not fit the small tmpfs"
    with pytest.raises(RawZoneError, match=r"No space left on device.*FLUX_RAW_ROOT"):
        write_pull(pull, str(small_tmpfs))
    assert not [p for p in small_tmpfs.rglob("*") if p.is_file() and ".partial-" in p.name]
    assert not list(small_tmpfs.rglob("manifest-*.json"))

    clean, rerun = tmp_path / "clean", tmp_path / "rerun"
    write_pull(pull, str(clean))
    shutil.copytree(small_tmpfs, rerun)  # what the failed run left (whole files only)
    write_pull(pull, str(rerun))
    assert _raw_zone_state(rerun) == _raw_zone_state(clean)


def test_a_read_only_raw_zone_fails_clearly(small_tmpfs: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    with pytest.raises(RawZoneError, match=r"Read-only file system.*FLUX_RAW_ROOT"):
        write_pull(_demo_pull("hgnc"), str(small_tmpfs))
