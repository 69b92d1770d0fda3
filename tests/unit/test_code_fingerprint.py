"""The stack's code server reloads when the code under it changed: the fingerprint it compares moves with any edit,
an added module or a new dbt manifest, and not otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from dagster_project.stack.code_server import code_fingerprint


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    package = tmp_path / "package"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    (package / "sub" / "b.py").write_text("B = 2\n")
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}")
    return package, manifest


def test_the_fingerprint_is_stable_until_the_code_changes(tmp_path: Path) -> None:
    package, manifest = _tree(tmp_path)
    first = code_fingerprint([package, manifest])
    assert code_fingerprint([package, manifest]) == first
    (package / "notes.txt").write_text("not code")
    assert code_fingerprint([package, manifest]) == first


def test_an_edit_a_new_module_or_a_new_manifest_changes_it(tmp_path: Path) -> None:
    package, manifest = _tree(tmp_path)
    seen = {code_fingerprint([package, manifest])}
    (package / "sub" / "b.py").write_text("B = 3\n")  # same size, new content: the mtime moves
    stat = (package / "sub" / "b.py").stat()
    os.utime(package / "sub" / "b.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    seen.add(code_fingerprint([package, manifest]))
    (package / "c.py").write_text("C = 1\n")
    seen.add(code_fingerprint([package, manifest]))
    manifest.write_text('{"nodes": {}}')
    seen.add(code_fingerprint([package, manifest]))
    assert len(seen) == 4
