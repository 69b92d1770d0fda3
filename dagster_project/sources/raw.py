"""The raw zone: immutable files per source and pull date, plus a manifest that makes up the dataset version.

Layout under FLUX_RAW_ROOT (any fsspec URL): <source>/<YYYY-MM-DD>/<sha12>-<name> and
<source>/<YYYY-MM-DD>/manifest-<HHMMSS>-<sha12>.json. A file's path includes its content hash, so writing the same
bytes again is a no-op and nothing already written is ever overwritten.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import fsspec


@dataclass
class RawPull:
    source: str
    files: dict[str, bytes]
    release: str
    retrieved_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    requests: int | None = None  # HTTP requests a live pull sent (retries included); None when nothing was fetched


@dataclass(frozen=True)
class Manifest:
    source: str
    release: str
    retrieved_at: str
    pull_date: str
    files: dict[str, str]  # logical name -> raw-zone path
    uri: str

    @property
    def dataset_version(self) -> str:
        return f"{self.source}:{self.release}@{self.retrieved_at}"


class MissingSourceFilesError(FileNotFoundError):
    """A snapshot or demo folder lacks files a source reads: no retry can bring them."""


def read_files(root: Path, names: list[str]) -> dict[str, bytes]:
    missing = [n for n in names if not (root / n).is_file()]
    if missing:
        raise MissingSourceFilesError(f"missing source files under {root}: {', '.join(missing)}")
    return {n: (root / n).read_bytes() for n in names}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RawZoneError(OSError):
    """The raw zone cannot be written (read-only, full, missing); nothing partial is left behind."""


def _write_whole(fs: fsspec.AbstractFileSystem, path: str, data: bytes) -> None:
    """Write under a temporary name and rename: a content-addressed path never holds a truncated file, which a
    later run would otherwise take for the finished one and never rewrite."""
    partial = f"{path}.partial-{uuid.uuid4().hex[:8]}"
    try:
        with fs.open(partial, "wb") as fh:
            fh.write(data)
        fs.mv(partial, path)
    except BaseException:
        try:
            if fs.exists(partial):
                fs.rm(partial)
        except OSError:
            pass
        raise


def write_pull(pull: RawPull, raw_root: str) -> Manifest:
    try:
        return _write_pull(pull, raw_root)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RawZoneError(
            exc.errno or 0,
            f"cannot write {pull.source} to the raw zone FLUX_RAW_ROOT={raw_root}: "
            f"{reason}; free space or point FLUX_RAW_ROOT at a writable location, then rerun "
            "(nothing partial was kept)",
        ) from exc


def _write_pull(pull: RawPull, raw_root: str) -> Manifest:
    fs, root = fsspec.core.url_to_fs(raw_root)
    pull_date = pull.retrieved_at[:10]
    folder = f"{root.rstrip('/')}/{pull.source}/{pull_date}"
    fs.makedirs(folder, exist_ok=True)
    stored: dict[str, str] = {}
    for name, data in sorted(pull.files.items()):
        path = f"{folder}/{_sha(data)[:12]}-{name.replace('/', '__')}"
        if not fs.exists(path):
            _write_whole(fs, path, data)
        stored[name] = path
    body = {
        "source": pull.source,
        "release": pull.release,
        "retrieved_at": pull.retrieved_at,
        "pull_date": pull_date,
        "files": stored,
    }
    encoded = json.dumps(body, indent=2, sort_keys=True).encode()
    manifest_path = f"{folder}/manifest-{pull.retrieved_at[11:19].replace(':', '')}-{_sha(encoded)[:12]}.json"
    _write_whole(fs, manifest_path, encoded)
    return Manifest(pull.source, pull.release, pull.retrieved_at, pull_date, stored, manifest_path)


def unchanged_since(pull: RawPull, raw_root: str) -> Manifest | None:
    """The latest manifest when it already holds exactly these files and this release (a re-pull that found
    nothing new records nothing new); else None."""
    try:
        latest = latest_manifest(pull.source, raw_root)
    except FileNotFoundError:
        return None
    if latest.release != pull.release or set(latest.files) != set(pull.files):
        return None
    same = all(
        Path(latest.files[name]).name == f"{_sha(data)[:12]}-{name.replace('/', '__')}"
        for name, data in pull.files.items()
    )
    return latest if same else None


def manifests(source: str, raw_root: str) -> list[Manifest]:
    """Every pull of `source` the raw zone holds, oldest first (empty when there is none)."""
    fs, root = fsspec.core.url_to_fs(raw_root)
    found = []
    for path in fs.glob(f"{root.rstrip('/')}/{source}/*/manifest-*.json"):
        body = json.loads(fs.cat_file(path))
        found.append(
            Manifest(body["source"], body["release"], body["retrieved_at"], body["pull_date"], body["files"], path)
        )
    return sorted(found, key=lambda m: m.retrieved_at + m.uri)


def latest_manifest(source: str, raw_root: str) -> Manifest:
    found = manifests(source, raw_root)
    if not found:
        raise FileNotFoundError(f"no raw pull for {source} under {raw_root}; materialize {source}_raw first")
    return found[-1]


def load_files(manifest: Manifest, raw_root: str) -> dict[str, bytes]:
    fs, _ = fsspec.core.url_to_fs(raw_root)
    return {name: fs.cat_file(path) for name, path in manifest.files.items()}
