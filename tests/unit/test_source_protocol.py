"""Every registered source is one folder's `Source`: the registry, the assets, their checks and the sensor read
everything source-specific from it."""

from __future__ import annotations

import inspect
from pathlib import Path

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.definitions import build_definitions
from dagster_project.sources import registry
from dagster_project.sources.source import Source

PROTOCOL_METHODS = {"pull_live", "pull_snapshot", "pull_demo", "parse"}


def test_each_source_lives_in_its_own_folder_and_implements_the_protocol() -> None:
    for name, source in registry.SOURCES.items():
        assert source.name == name
        folder = Path(inspect.getfile(type(source))).parent
        assert folder.name == name and (folder / "client.py").is_file() and (folder / "parser.py").is_file()
        for method in PROTOCOL_METHODS:
            signature = inspect.signature(getattr(source, method))
            assert list(signature.parameters) == list(inspect.signature(getattr(Source, method)).parameters)[1:]
        assert source.snapshot_files and all(not Path(f).is_absolute() for f in source.snapshot_files)


def test_the_registry_alone_decides_which_assets_and_checks_exist() -> None:
    graph = build_definitions(FluxSettings()).resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    checks = {(key.asset_key.to_user_string(), key.name) for key in graph.asset_check_keys}
    for name, source in registry.SOURCES.items():
        assert {f"{name}_raw", f"{name}_documents"} <= keys
        rows_check = "disease_associations_valid" if name == "clinvar" else "gene_identifiers_valid"
        expected = "documents_valid" if source.id_pattern else rows_check
        assert (f"{name}_documents", expected) in checks
        assert (f"{name}_documents", "quarantine_rate_ok") in checks
    assert {key for key in keys if key.endswith("_raw")} == {f"{name}_raw" for name in registry.SOURCES}
