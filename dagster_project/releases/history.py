"""A source's releases as the raw zone holds them, in the order they were first pulled: the keys of the release
history's partitions, and the release each one is compared with (the one pulled before it)."""

from __future__ import annotations

from dataclasses import dataclass

from dagster_project.releases.store import release_key
from dagster_project.sources.raw import Manifest, manifests

# Dagster refuses these in a partition key; a provider's release label never holds them, but a key that did would
# fail at registration, so they are replaced (the digest after '#' keeps keys distinct).
_NOT_IN_PARTITION_KEYS = (",", "[", "]", "...", "\n", "\r", "\t")


def partition_key(key: str) -> str:
    for bad in _NOT_IN_PARTITION_KEYS:
        key = key.replace(bad, " ")
    return key


@dataclass(frozen=True)
class RawRelease:
    key: str  # the release key (store.release_key): how source_releases names it
    manifest: Manifest  # the latest pull of these files
    first_pulled: str  # when these files were first pulled (retrieved_at of the earliest pull)
    pulls: int

    @property
    def partition(self) -> str:
        """The same key as a partition key."""
        return partition_key(self.key)


class ReleaseNotInRawZoneError(LookupError):
    """A release partition whose files the raw zone no longer holds: it cannot be kept or compared again."""


def raw_releases(source: str, raw_root: str) -> list[RawRelease]:
    """Each distinct release (label and files) of `source` in the raw zone, ordered by its first pull; a release
    pulled again after another keeps its first place."""
    first: dict[str, Manifest] = {}
    latest: dict[str, Manifest] = {}
    pulls: dict[str, int] = {}
    for manifest in manifests(source, raw_root):
        key = release_key(manifest)
        first.setdefault(key, manifest)
        latest[key] = manifest
        pulls[key] = pulls.get(key, 0) + 1
    return [RawRelease(key, latest[key], first[key].retrieved_at, pulls[key]) for key in first]


def locate(source: str, key: str, raw_root: str) -> tuple[RawRelease, RawRelease | None]:
    """The release whose partition key is `key`, and the one pulled before it (None for the first)."""
    releases = raw_releases(source, raw_root)
    keys = [release.partition for release in releases]
    if key not in keys:
        held = ", ".join(repr(k) for k in keys) or "none"
        raise ReleaseNotInRawZoneError(
            f"{source} release {key!r} is no longer in the raw zone FLUX_RAW_ROOT={raw_root} (its pulls were removed "
            f"or the raw root changed), so it cannot be kept or compared again; releases held there: {held}"
        )
    at = keys.index(key)
    return releases[at], releases[at - 1] if at else None
