"""Resolution's input digest: the same member sets, names and hierarchy in any order give one digest; any change
to what resolution reads gives another."""

from __future__ import annotations

from dagster_project.resolution.inputs import ResolutionSources
from dagster_project.resolution.scores import PathwaySets


def _sources(
    kegg_members: frozenset[str] = frozenset({"P04637", "Q00987"}),
    name: str = "Glycolysis",
    parents: dict[str, list[str]] | None = None,
    reverse: bool = False,
) -> ResolutionSources:
    reactome = [("R-HSA-1", name, frozenset({"P04637"})), ("R-HSA-2", "Apoptosis", frozenset({"Q00987", "P42574"}))]
    if reverse:
        reactome.reverse()
    return ResolutionSources(
        PathwaySets([r[0] for r in reactome], [r[1] for r in reactome], [r[2] for r in reactome]),
        PathwaySets(["hsa00010"], ["Glycolysis / Gluconeogenesis"], [kegg_members]),
        parents if parents is not None else {"R-HSA-2": ["R-HSA-1"]},
    )


def test_the_digest_ignores_order_and_follows_every_input() -> None:
    same = _sources().digest()
    assert _sources(reverse=True).digest() == same
    changed = [
        _sources(kegg_members=frozenset({"P04637"})),
        _sources(name="Glycolysis (renamed)"),
        _sources(parents={}),
    ]
    assert all(s.digest() != same for s in changed)
    assert len({s.digest() for s in changed}) == len(changed)
