"""Files Flux renders from its settings."""

from __future__ import annotations

from pathlib import Path


def write_private(target: Path, content: str) -> None:
    """Write `content` to a file only its owner can read (it may hold a password); untouched when unchanged, so
    a rendered config's mtime says when the settings last changed."""
    if not target.exists() or target.read_text() != content:
        target.touch(mode=0o600, exist_ok=True)
        target.write_text(content)
