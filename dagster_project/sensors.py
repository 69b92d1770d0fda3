"""Snapshot mode: start a refresh when the snapshot files the raw pulls read change, by content hash (not by
mtime alone)."""

import hashlib
from pathlib import Path

import dagster as dg

from dagster_project.schedules import nightly_raw_pulls
from dagster_project.settings import get_settings
from dagster_project.sources.hgnc import client as hgnc_client
from dagster_project.sources.kegg import client as kegg_client
from dagster_project.sources.openalex import client as openalex_client
from dagster_project.sources.reactome import client as reactome_client

# registry.py reads PubMed's snapshot file by this literal; test_sensors checks the whole list against the
# registry's snapshot pulls, so the two cannot drift apart.
PUBMED_SNAPSHOT_FILE = "pubmedqa/ori_pqal.json"

# Only these files: the snapshot folder also holds eval and test fixtures, whose changes need no raw pull.
SNAPSHOT_FILES: tuple[str, ...] = tuple(sorted({
    *reactome_client.SNAPSHOT_FILES, *kegg_client.SNAPSHOT_FILES, hgnc_client.SNAPSHOT_FILE,
    *openalex_client.SNAPSHOT_FILES, PUBMED_SNAPSHOT_FILE,
}))

# path → ((size, mtime_ns), sha256): a tick re-reads only files whose stat changed, not hundreds of MB each time;
# one entry per path, so the memo stays as small as the file list.
_digests: dict[str, tuple[tuple[int, int], str]] = {}


def _file_digest(path: Path) -> str:
    stat = path.stat()
    key, seen = str(path.resolve()), (stat.st_size, stat.st_mtime_ns)
    cached = _digests.get(key)
    if cached is None or cached[0] != seen:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        cached = _digests[key] = (seen, digest.hexdigest())
    return cached[1]


def snapshot_hash(root: Path, names: tuple[str, ...] = SNAPSHOT_FILES) -> str:
    """One hash over the named files under `root`: relative path + content digest, in sorted order."""
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{name}\0{_file_digest(root / name)}\n".encode())
    return digest.hexdigest()


@dg.sensor(job=nightly_raw_pulls, minimum_interval_seconds=get_settings().snapshot_sensor_interval,
           default_status=dg.DefaultSensorStatus.RUNNING,
           description="In snapshot mode, refresh when the snapshot files the raw pulls read change (content hash).")
def snapshot_changed(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    settings = get_settings()
    if settings.source_mode != "snapshot":
        return dg.SkipReason(f"FLUX_SOURCE_MODE is {settings.source_mode}; this sensor watches snapshot files")
    root = Path(settings.snapshot_dir)
    if not root.is_dir():
        return dg.SkipReason(f"snapshot directory {root} does not exist (check FLUX_SNAPSHOT_DIR)")
    # A pull would fail on these anyway; wait until the snapshot is complete rather than start a doomed run.
    missing = [name for name in SNAPSHOT_FILES if not (root / name).is_file()]
    if missing:
        return dg.SkipReason(f"snapshot files missing under {root}: {', '.join(missing)} (check FLUX_SNAPSHOT_DIR)")
    current = snapshot_hash(root)
    if current == context.cursor:
        return dg.SkipReason("snapshot files unchanged")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=current, tags={"flux/snapshot_hash": current})],
                           cursor=current)
