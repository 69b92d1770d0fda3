"""What a scorecard's result depends on, as plain data for `store.input_fingerprint`: the candidate index and the
dataset it was built from, the questions asked, the settings that shape retrieval and answers, the code that
retrieves, answers and grades (hashed from the files themselves, so an uncommitted edit counts) and the versions
of the libraries that compute scores. A full rerun whose inputs all match reuses the stored result; any change
re-evaluates."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from dagster_project.core.settings import FluxSettings
from dagster_project.core.versions import code_digest

LIBRARIES = ("bm25s", "sentence-transformers", "transformers", "torch", "numpy", "scipy", "scikit-learn")
SETTING_GROUPS = ("index", "retrieval", "llm", "evals", "graph")


def library_versions() -> dict[str, str]:
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "-"
    return found


def questions_digest(questions: Iterable[Any]) -> str:
    digest = hashlib.sha256()
    for question in questions:
        fields = dataclasses.asdict(question) if dataclasses.is_dataclass(question) else question
        digest.update(repr(sorted(fields.items()) if isinstance(fields, dict) else fields).encode())
    return digest.hexdigest()[:16]


def file_digest(path: Path | None) -> str:
    """A file's (or a folder's files') content hash; "-" when there is none."""
    if path is None or not path.exists():
        return "-"
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        digest.update(f"{file.name}\n".encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def scorecard_inputs(
    settings: FluxSettings, index_version: str, dataset_version: str, questions: Iterable[Any], **extra: Any
) -> dict[str, Any]:
    # Secrets are dumped masked: they are not inputs to the numbers, and must not reach a hash input either.
    groups = {
        name: getattr(settings, name).model_dump(mode="json", exclude={"eval_reuse_unchanged"})
        for name in SETTING_GROUPS
    }
    return {
        "index_version": index_version,
        "dataset_version": dataset_version,
        "code": code_digest(),
        "libraries": library_versions(),
        "settings": groups,
        "questions": questions_digest(questions),
        **extra,
    }
