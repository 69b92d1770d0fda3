"""Start a refresh when the files the raw pulls read change, by content hash (not by mtime alone): the snapshot
files in snapshot mode, the demo folder in demo mode. Live mode has no files to watch (the schedule pulls)."""

import hashlib
from pathlib import Path

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.pull_settings import check_pull_settings
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.defs.run_tags import run_tags
from dagster_project.sources import registry

SNAPSHOT_SENSOR = "snapshot_changed"
# Only these files: the snapshot folder also holds eval and test fixtures, whose changes need no raw pull.
SNAPSHOT_FILES: tuple[str, ...] = registry.snapshot_files()

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


def demo_files(root: Path) -> tuple[str, ...]:
    """Every file of a demo folder but its README: the demo folder holds nothing but pull inputs."""
    return tuple(
        sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != "README.md")
    )


def watched_files(settings: FluxSettings) -> tuple[Path, tuple[str, ...]] | dg.SkipReason:
    """The folder and relative file names the raw pulls read in this mode, or why there is nothing to watch."""
    if settings.sources.source_mode == "live":
        return dg.SkipReason("FLUX_SOURCE_MODE is live: the nightly schedule pulls; there are no files to watch")
    snapshot = settings.sources.source_mode == "snapshot"
    root, variable = (
        (Path(settings.sources.snapshot_dir), "FLUX_SNAPSHOT_DIR")
        if snapshot
        else (Path(settings.sources.demo_dir), "FLUX_DEMO_DIR")
    )
    if not root.is_dir():
        return dg.SkipReason(f"{settings.sources.source_mode} directory {root} does not exist (check {variable})")
    if not snapshot:
        return root, demo_files(root)
    # A pull would fail on these anyway; wait until the snapshot is complete rather than start a doomed run.
    missing = [name for name in SNAPSHOT_FILES if not (root / name).is_file()]
    if missing:
        return dg.SkipReason(f"snapshot files missing under {root}: {', '.join(missing)} (check {variable})")
    return root, SNAPSHOT_FILES


def evaluate_snapshot_sensor(
    context: dg.SensorEvaluationContext, settings: FluxSettings
) -> dg.SensorResult | dg.SkipReason:
    """Request the raw pulls when the watched files' content hash moved since the last look."""
    watched = watched_files(settings)
    if isinstance(watched, dg.SkipReason):
        return watched
    current = snapshot_hash(*watched)
    if context.cursor is None:
        # The first look records what the files are now: the pull that read them is `make run`'s (or the
        # schedule's). Pulling here would race the run that `make run` submits beside this daemon.
        return dg.SensorResult(
            cursor=current,
            skip_reason=f"first evaluation: watching {len(watched[1])} files "
            f"under {watched[0]} from now on; a change starts the raw pulls",
        )
    if current == context.cursor:
        return dg.SkipReason("source files unchanged")
    # The cursor moves only with a request: a tick failed on its settings is asked again at the next tick.
    check_pull_settings(settings, snapshot_files=False)
    tags = run_tags(settings, "sensor") | {"flux/snapshot_hash": current}
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=current, tags=tags)], cursor=current)


def build_snapshot_sensor(settings: FluxSettings, job: UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    @dg.sensor(
        name=SNAPSHOT_SENSOR,
        job=job,
        minimum_interval_seconds=settings.ops.snapshot_sensor_interval,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Refresh when the snapshot (or demo) files the raw pulls read change (content hash).",
    )
    def _sensor(context: dg.SensorEvaluationContext, settings: FluxSettingsParam) -> dg.SensorResult | dg.SkipReason:
        return evaluate_snapshot_sensor(context, settings)

    return _sensor
