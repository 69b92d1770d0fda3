"""The tests that change the demo platform run last, and restore it only for a later reader; a value shared by the
session's pytest-xdist workers is computed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.session import changes_demo_last, demo_read_later, once_per_session


@dataclass(eq=False)
class Item:
    name: str
    markers: tuple[str, ...] = ()
    fixturenames: tuple[str, ...] = field(default=("demo_platform",))

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_tests_that_change_the_demo_move_to_the_end_in_their_order() -> None:
    items = [Item("a"), Item("nightly", ("changes_demo",)), Item("b"), Item("other", ("changes_demo",)), Item("c")]
    changes_demo_last(items)
    assert [i.name for i in items] == ["a", "b", "c", "nightly", "other"]


def test_the_demo_is_restored_only_when_a_later_test_reads_it() -> None:
    nightly, reader, bystander = Item("nightly"), Item("reader"), Item("unit", fixturenames=("tmp_path",))

    def request(node: Item, items: list[Item]) -> object:
        return SimpleNamespace(node=node, session=SimpleNamespace(items=items))

    assert not demo_read_later(request(nightly, [reader, nightly]))  # type: ignore[arg-type]
    assert not demo_read_later(request(nightly, [reader, nightly, bystander]))  # type: ignore[arg-type]
    assert demo_read_later(request(nightly, [nightly, reader]))  # type: ignore[arg-type]


def test_a_once_per_session_value_is_computed_by_the_first_worker_and_read_by_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def compute() -> dict[str, int]:
        calls.append(1)
        return {"calls": len(calls)}

    workers = [SimpleNamespace(getbasetemp=lambda w=w: tmp_path / f"popen-{w}") for w in ("gw0", "gw1")]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert [once_per_session(w, "probe", compute) for w in workers] == [{"calls": 1}, {"calls": 1}]  # type: ignore[arg-type]
    assert once_per_session(workers[0], "other", compute) == {"calls": 2}  # type: ignore[arg-type]
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert once_per_session(workers[0], "probe", compute) == {"calls": 3}  # type: ignore[arg-type]  # no xdist: no file
