"""Stage 1 — raw pulls: each source's files, fetched (live) or read (snapshot, demo), written immutably to the
raw zone with release and retrieval time. Together these make up the dataset version."""

import time

import dagster as dg

from dagster_project.core.http import HttpRequestError
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.lineage import MODE_METADATA, RAW_ROOT_METADATA
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.postgres import platform_tables_required
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.sources import registry
from dagster_project.sources.raw import (
    Manifest,
    MissingSourceFilesError,
    RawPull,
    RawZoneError,
    unchanged_since,
    write_pull,
)
from dagster_project.sources.source import SourcePullError, SourceSetupError
from dagster_project.storage.loaders import record_raw_pull

RAW_GROUP = "raw"


def raw_retry_policy(settings: FluxSettings) -> dg.RetryPolicy:
    # Network pulls fail transiently (429s that outlast the client's own retries, a dropped connection); the
    # policy sits on the op, so it holds in every run: nightly, automation, the UI and `flux materialize`.
    return dg.RetryPolicy(
        max_retries=settings.ops.raw_max_retries,
        delay=settings.ops.raw_retry_delay,
        backoff=dg.Backoff.EXPONENTIAL,
        jitter=dg.Jitter.PLUS_MINUS,
    )


def build_raw_asset(source: str, retry_policy: dg.RetryPolicy) -> dg.AssetsDefinition:
    @dg.asset(
        name=f"{source}_raw",
        group_name=RAW_GROUP,
        kinds={"python", "file"},
        deps=["postgres_schema"],
        description=f"Raw {source} files for the configured FLUX_SOURCE_MODE (live API, snapshot files or the "
        "bundled demo), stored immutably under `FLUX_RAW_ROOT/<source>/<pull date>/` with a manifest.",
        retry_policy=retry_policy,
    )
    def _raw(
        context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
    ) -> dg.MaterializeResult:
        started = time.monotonic()
        pulled = _pull(source, settings)
        elapsed = round(time.monotonic() - started, 2)
        byte_count = sum(len(b) for b in pulled.files.values())
        previous = unchanged_since(pulled, settings.raw_root_path)
        if previous is not None:  # nothing new: the dataset version stays, no pull is recorded twice
            manifest = previous
            context.log.info(f"{source}: unchanged since {previous.retrieved_at} ({previous.uri})")
        else:
            manifest = _write(pulled, settings.raw_root_path)
            context.log.info(f"{source}: {len(pulled.files)} files, {byte_count} bytes → {manifest.uri}")
        # Recorded on both paths (an upsert on source + retrieval time): a pull written by an attempt that failed
        # before recording it is recorded by the retry, never twice.
        _record(postgres, manifest, settings, byte_count)
        # The data version names the pull: a pull that found nothing new keeps it, so automation carries only
        # new data downstream (automation.py).
        return dg.MaterializeResult(
            data_version=dg.DataVersion(manifest.dataset_version),
            metadata={
                "changed": previous is None,
                MODE_METADATA: settings.sources.source_mode,
                RAW_ROOT_METADATA: settings.raw_root_path,
                "release": manifest.release,
                "retrieved_at": manifest.retrieved_at,
                "dataset_version": manifest.dataset_version,
                "files": len(pulled.files),
                "bytes": byte_count,
                "manifest": dg.MetadataValue.path(manifest.uri),
                "pull_seconds": elapsed,
                **({"requests": pulled.requests} if pulled.requests is not None else {}),
            },
        )

    return _raw


def _pull(source: str, settings: FluxSettings) -> RawPull:
    """The source's pull; a failure that another try cannot mend (a missing key, a refused identity, a 400, 401,
    403 or 415) fails the asset at once, with the provider's words and the setting to change, instead of spending
    the retry policy on it. What the client retries (a 429, a 5xx, a timeout, a dropped connection, a truncated
    body) goes to the retry policy once the client's own attempts are spent: its delay outlasts a rate-limit window."""
    try:
        return registry.pull(source, settings)
    except MissingSourceFilesError as exc:
        folder = "FLUX_DEMO_DIR" if settings.sources.source_mode == "demo" else "FLUX_SNAPSHOT_DIR"
        raise dg.Failure(
            description=f"{source}: {exc}: point {folder} at a folder that holds them (FLUX_SOURCE_MODE="
            f"{settings.sources.source_mode})",
            allow_retries=False,
        ) from None
    except SourceSetupError as exc:
        raise dg.Failure(description=f"{source}: {exc}", allow_retries=False) from None
    except HttpRequestError as exc:
        if exc.retryable:
            raise
        raise dg.Failure(
            description=f"{source}: {exc}",
            allow_retries=False,
            metadata={"status": exc.status, "url": exc.url, "attempts": exc.attempts},
        ) from None
    except SourcePullError as exc:
        if exc.transient:
            raise
        raise dg.Failure(
            description=f"{source}: {exc}",
            allow_retries=False,
            metadata={"status": exc.status} if exc.status is not None else None,
        ) from None


def _write(pulled: RawPull, raw_root: str) -> Manifest:
    """A raw zone that cannot be written (read-only, full, not a folder) fails the asset at once: the message names
    FLUX_RAW_ROOT, and the retry policy's minutes of backoff would not mend it."""
    try:
        return write_pull(pulled, raw_root)
    except RawZoneError as exc:
        raise dg.Failure(description=f"{pulled.source}: {exc.strerror or exc}", allow_retries=False) from None


def _record(postgres: PostgresResource, manifest: Manifest, settings: FluxSettings, byte_count: int) -> None:
    with platform_tables_required():
        record_raw_pull(postgres.get_engine(), manifest, settings.sources.source_mode, byte_count)


def build_raw_assets(settings: FluxSettings) -> list[dg.AssetsDefinition]:
    """One raw asset per source; built from the settings (not loaded from this module) for their retry policy."""
    return [build_raw_asset(source, raw_retry_policy(settings)) for source in registry.SOURCES]
