"""The tests that change the demo platform run last, and restore it only for a later reader."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from tests.support.session import changes_demo_last, demo_read_later


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
