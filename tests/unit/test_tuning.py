"""Tuning presets: typed, versioned profiles of the algorithm constants, picked by FLUX_TUNING_PRESET; an operator's
variables stay environment variables and cannot be set by a preset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagster_project.core.setting_groups import GROUP_OF
from dagster_project.core.settings import FluxSettings
from dagster_project.core.tuning import (
    TUNING_KEYS,
    TuningPresetError,
    bundled_presets,
    load_preset,
    tuning_record,
    tuning_values,
)
from tests.support.settings_env import settings_error


def _preset(tmp_path: Path, values: dict[str, object], version: int = 1) -> str:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "version": version, "description": "a test", "values": values}))
    return str(path)


def test_every_tuning_key_is_a_setting_and_every_bundled_preset_loads() -> None:
    assert set(GROUP_OF) >= TUNING_KEYS
    assert "thorough" in bundled_presets()
    for name in bundled_presets():
        preset = load_preset(name)
        assert preset.name == name and preset.version >= 1 and set(preset.values) <= TUNING_KEYS


def test_a_preset_sets_its_constants_and_leaves_the_rest_at_their_defaults() -> None:
    thorough, default = FluxSettings(tuning_preset="thorough"), FluxSettings()
    preset = load_preset("thorough")
    assert tuning_values(thorough) == tuning_values(default) | preset.values
    assert tuning_record(thorough)["tuning_digest"] != tuning_record(default)["tuning_digest"]


def test_a_name_given_beats_the_environment_which_beats_the_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUX_DENSE_TOP_K", "9")  # an experiment's override of one constant
    settings = FluxSettings(tuning_preset="thorough", bm25_top_k=3)
    assert (settings.retrieval.dense_top_k, settings.retrieval.bm25_top_k, settings.retrieval.rerank_keep) == (9, 3, 8)
    copy = settings.evolve(rerank_keep=6)  # a copy keeps what it was made from
    assert (copy.retrieval.dense_top_k, copy.retrieval.bm25_top_k, copy.retrieval.rerank_keep) == (9, 3, 6)
    assert (
        tuning_record(settings)["tuning_digest"]
        != tuning_record(FluxSettings(tuning_preset="thorough"))["tuning_digest"]
    )


def test_a_preset_may_not_set_where_flux_runs(tmp_path: Path) -> None:
    with pytest.raises(TuningPresetError, match=r"not tuning constants.*pg_port"):
        load_preset(_preset(tmp_path, {"pg_port": 5432, "dense_top_k": 10}))


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"dense_top_k": 0}, "dense_top_k=0: Input should be greater than or equal to 1"),
        ({"bm25_b": "steep"}, "bm25_b='steep': Input should be a valid number"),
    ],
)
def test_a_preset_value_is_checked_against_its_setting(tmp_path: Path, values: dict[str, object], said: str) -> None:
    with pytest.raises(TuningPresetError) as err:
        load_preset(_preset(tmp_path, values))
    assert said in str(err.value) and "mine.json" in str(err.value)


def test_an_unknown_or_broken_preset_is_one_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = []
    for preset in ("no-such-profile", _preset(tmp_path, {"hnsw_m": 1})):
        monkeypatch.setenv("FLUX_TUNING_PRESET", preset)
        error = settings_error()
        assert error.variable == "FLUX_TUNING_PRESET"
        said.append(str(error))
    assert said[0].startswith("no tuning preset 'no-such-profile': bundled ones are default, thorough")
    assert "hnsw_m=1: Input should be greater than or equal to 2" in said[1]


def test_a_preset_file_from_outside_the_package_is_used(tmp_path: Path) -> None:
    settings = FluxSettings(tuning_preset=_preset(tmp_path, {"hnsw_ef_search": 64, "llm_temperature": 0.2}, 3))
    assert (settings.index.hnsw_ef_search, settings.llm.llm_temperature) == (64, 0.2)
    assert tuning_record(settings)["tuning_preset_version"] == "3"


def test_the_configuration_page_lists_the_tuning_constants_apart_from_the_operators_variables() -> None:
    import re

    from dagster_project.core.settings import REPO_ROOT

    page = (REPO_ROOT / "docs" / "configuration.md").read_text()
    operator, tuning = page.split("## Tuning presets", 1)

    def rows(text: str) -> set[str]:
        cells = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `FLUX_")]
        return {name.lower() for cell in cells for name in re.findall(r"`FLUX_([A-Z0-9_]+)`", cell)}

    assert rows(tuning.split("\n## ", 1)[0]) == TUNING_KEYS
    assert not rows(operator) & TUNING_KEYS
