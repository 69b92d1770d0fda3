"""Snapshot mode: start a refresh when the snapshot files change, by content hash (not by mtime alone)."""

import hashlib
from pathlib import Path

import dagster as dg

from dagster_project.schedules import nightly_raw_pulls
from dagster_project.settings import get_settings

# (path, size, mtime_ns) → sha256: a tick re-reads only files whose stat changed, not hundreds of MB each time.
_digests: dict[tuple[str, int, int], str] = {}


def _file_digest(path: Path) -> str:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _digests[key] = digest.hexdigest()
    return _digests[key]


def snapshot_hash(root: Path) -> str:
    """One hash over every regular file under `root`: relative path + content digest, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{_file_digest(path)}\n".encode())
    return digest.hexdigest()


@dg.sensor(job=nightly_raw_pulls, minimum_interval_seconds=get_settings().snapshot_sensor_interval,
           default_status=dg.DefaultSensorStatus.RUNNING,
           description="In snapshot mode, refresh when the files under FLUX_SNAPSHOT_DIR change (content hash).")
def snapshot_changed(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    settings = get_settings()
    if settings.source_mode != "snapshot":
        return dg.SkipReason(f"FLUX_SOURCE_MODE is {settings.source_mode}; this sensor watches snapshot files")
    root = Path(settings.snapshot_dir)
    if not root.is_dir():
        return dg.SkipReason(f"snapshot directory {root} does not exist (check FLUX_SNAPSHOT_DIR)")
    current = snapshot_hash(root)
    if current == context.cursor:
        return dg.SkipReason("snapshot files unchanged")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=current, tags={"flux/snapshot_hash": current})],
                           cursor=current)
