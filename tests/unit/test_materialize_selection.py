"""A selection that names no asset, or is not a selection at all, is refused before any run (Dagster would take
an empty asset list for "every asset")."""

from __future__ import annotations

import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.materialize import SelectionError, materialize_selection


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        ("group:nope", r"'group:nope' selects no asset \(groups: .*index.*\)"),
        ("bogus_asset", r"'bogus_asset' is not a valid asset selection"),
        ("key:a+++", r"'key:a\+\+\+' is not a valid asset selection"),
    ],
)
def test_a_selection_of_nothing_is_refused_before_any_run(tmp_path: object, selection: str, message: str) -> None:
    # No services: the refusal comes before the instance or any store is touched (FLUX_HOME is empty).
    with pytest.raises(SelectionError, match=message):
        materialize_selection(FluxSettings(home=tmp_path), selection)
