"""What the raw pulls need from the settings a run will read, checked before the run exists: by `flux materialize`
(materialize.py) and on every tick of the nightly schedule and the snapshot sensor. A live pull without a contact
address, a raw root this user cannot write, or a snapshot folder missing files would fail the run at its first step;
a tick instead fails with one line naming the setting, requests no run, and the next tick after the fix proceeds."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from dagster_project.core.settings import FluxSettings


class PullSettingsError(dg.DagsterError):
    """Settings a raw pull would fail on. A DagsterError, so a schedule or sensor tick records this one line as its
    failure (Dagster passes its own errors through the user-code boundary instead of wrapping them)."""


def raw_root_problem(settings: FluxSettings) -> str | None:
    root = settings.raw_root_path
    if "://" in root and not root.startswith("file://"):
        return None  # an object store: its client reports its own errors
    local = Path(root.removeprefix("file://"))
    existing = next((p for p in (local, *local.parents) if p.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return (
            f"FLUX_RAW_ROOT {root} cannot be written ({existing or local} is not a folder this user can write): "
            "point FLUX_RAW_ROOT at a folder you can write, or unset it (the default is <FLUX_HOME>/raw)"
        )
    return None


def snapshot_problem(settings: FluxSettings) -> str | None:
    from dagster_project.sources import registry

    if settings.sources.source_mode != "snapshot":
        return None
    root = Path(settings.sources.snapshot_dir)
    missing = [name for name in registry.snapshot_files() if not (root / name).is_file()]
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        return f"FLUX_SNAPSHOT_DIR {root} lacks {shown}: point it at a complete snapshot (FLUX_SOURCE_MODE=snapshot)"
    return None


def check_pull_settings(settings: FluxSettings, *, snapshot_files: bool = True) -> None:
    """Raise PullSettingsError (one line) when a raw pull of `settings` would fail on its settings."""
    from dagster_project.sources.source import SourceSetupError, live_contact_email

    if settings.sources.source_mode == "live":
        try:
            live_contact_email(settings)
        except SourceSetupError as exc:
            raise PullSettingsError(" ".join(str(exc).split())) from None
    problem = raw_root_problem(settings) or (snapshot_problem(settings) if snapshot_files else None)
    if problem is not None:
        raise PullSettingsError(problem)
