"""SharedPairs (dagster_project/evals/shared_pairs.py) lists exactly the pairs the nested loop lists, in the same
order, so a seeded sample of it picks the same generated questions as a sample of the full list."""

from __future__ import annotations

import random

import pytest

from dagster_project.evals.shared_pairs import SharedPairs


def _brute(items: list[str], features: dict[str, set[str]]) -> list[tuple[str, str]]:
    return [(x, y) for i, x in enumerate(items) for y in items[i + 1 :] if features[x] & features[y]]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_lazy_pairs_are_the_nested_loops_pairs_and_sample_alike(seed: int) -> None:
    rng = random.Random(seed)
    items = sorted(f"item{n:03d}" for n in range(rng.randint(2, 120)))
    features = {item: {f"f{rng.randint(0, 60)}" for _ in range(rng.randint(0, 4))} for item in items}
    lazy, full = SharedPairs(items, features), _brute(items, features)
    assert len(lazy) == len(full) and list(lazy) == full
    if full:
        assert random.Random(23).sample(lazy, min(13, len(full))) == random.Random(23).sample(full, min(13, len(full)))
        assert lazy[-1] == full[-1]


def test_no_shared_feature_means_no_pairs_and_indexing_past_the_end_fails() -> None:
    lazy = SharedPairs(["a", "b"], {"a": {"x"}, "b": {"y"}})
    assert len(lazy) == 0
    with pytest.raises(IndexError):
        lazy[0]
