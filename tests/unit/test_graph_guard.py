"""GraphGuard, the circuit breaker in front of Neo4j reads: a failure opens it for `retry_after` seconds, during
which reads fail at once without touching the graph; the first read after the window tries the graph again and
either closes it or opens it for another window. Time is a ManualClock the test moves: nothing sleeps."""

from __future__ import annotations

import pytest

from retrieval.retrievers.graph_guard import RETRY_AFTER, GraphGuard, GraphUnavailable, degraded_warning
from tests.support.clock import ManualClock


class FlakyGraph:
    """A graph read that fails while `down` is set, counting every time it is really called."""

    def __init__(self) -> None:
        self.down = False
        self.calls = 0

    def read(self) -> str:
        self.calls += 1
        if self.down:
            # Imported here, as the guard does: the neo4j package loads pandas, and only a failing read needs it.
            from neo4j.exceptions import ServiceUnavailable

            raise ServiceUnavailable("Couldn't connect to localhost:7687\nretried 3 times")
        return "facts"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def guard(clock: ManualClock) -> GraphGuard:
    return GraphGuard(retry_after=15.0, clock=clock)


def _opened(guard: GraphGuard, graph: FlakyGraph) -> GraphUnavailable:
    """Fail one read so the guard opens; the error it raised."""
    graph.down = True
    with pytest.raises(GraphUnavailable) as err:
        guard.call(graph.read)
    return err.value


def test_a_healthy_read_passes_through(guard: GraphGuard) -> None:
    graph = FlakyGraph()
    assert guard.call(graph.read) == "facts" and guard.call(graph.read) == "facts"
    assert graph.calls == 2 and guard.error == ""


def test_a_failure_opens_the_guard_with_the_first_line_of_the_error(guard: GraphGuard) -> None:
    from neo4j.exceptions import ServiceUnavailable

    graph = FlakyGraph()
    error = _opened(guard, graph)
    assert str(error) == guard.error == "Neo4j is unavailable: Couldn't connect to localhost:7687"
    assert isinstance(error.__cause__, ServiceUnavailable)


def test_while_open_reads_fail_at_once_until_retry_after(guard: GraphGuard, clock: ManualClock) -> None:
    graph = FlakyGraph()
    _opened(guard, graph)
    graph.down = False  # the graph is back, but the guard does not know yet
    opened_at = clock.now
    for offset in (0.0, 5.0, 14.999):  # at once, later, then just short of the 15 s window
        clock.now = opened_at + offset
        with pytest.raises(GraphUnavailable, match="Neo4j is unavailable"):
            guard.call(graph.read)
    assert graph.calls == 1  # only the failing read touched the graph: the open guard never called it


def test_after_retry_after_one_read_tries_again_and_a_success_closes_it(guard: GraphGuard, clock: ManualClock) -> None:
    graph = FlakyGraph()
    _opened(guard, graph)
    graph.down = False
    clock.advance(15.0)
    assert guard.call(graph.read) == "facts" and graph.calls == 2
    assert guard.error == ""
    assert guard.call(graph.read) == "facts"  # closed: reads go through


def test_a_failed_retry_opens_it_for_a_whole_new_window(guard: GraphGuard, clock: ManualClock) -> None:
    graph = FlakyGraph()
    _opened(guard, graph)
    clock.advance(20.0)
    _opened(guard, graph)  # the retry after the window fails: open again, from now
    assert graph.calls == 2
    graph.down = False
    clock.advance(14.0)
    with pytest.raises(GraphUnavailable):
        guard.call(graph.read)  # 34 s after the first failure, but only 14 s after the second
    clock.advance(1.0)
    assert guard.call(graph.read) == "facts" and graph.calls == 3


def test_errors_that_are_not_the_graphs_pass_through_and_leave_it_closed(guard: GraphGuard) -> None:
    def broken() -> str:
        raise ValueError("a bug in the query builder")

    with pytest.raises(ValueError, match="query builder"):
        guard.call(broken)
    graph = FlakyGraph()
    assert guard.call(graph.read) == "facts" and guard.error == ""


def test_an_error_without_a_message_is_named_by_its_type(guard: GraphGuard) -> None:
    def refused() -> str:
        raise ConnectionRefusedError

    with pytest.raises(GraphUnavailable, match=r"^Neo4j is unavailable: ConnectionRefusedError$"):
        guard.call(refused)


def test_the_defaults_callers_rely_on() -> None:
    # The pipeline and the API build GraphGuard() with no arguments: the real clock and the 15 s window.
    guard = GraphGuard()
    assert guard.retry_after == RETRY_AFTER == 15.0
    assert guard.call(lambda: 42) == 42


def test_the_degraded_warning_names_the_question_kind() -> None:
    assert degraded_warning("Neo4j is unavailable: down", "gene_lookup") == (
        "the knowledge graph is unavailable (Neo4j is unavailable: down); this gene lookup question is answered "
        "from text evidence only"
    )
    assert "; this question is answered" in degraded_warning("down", "literature")
