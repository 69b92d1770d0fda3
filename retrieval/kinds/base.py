"""What every question kind provides, in one place (retrieval/kinds/<kind>.py fills it in; registry.py lists
them): how to recognise the kind in a question, which proposed plans it executes, how it reads its facts from the
tables and the graph, the statements its answer makes (each citing node ids), its table for the page and the
Markdown export, what a follow-up question may refer back to, and how a generated question of it is graded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings
from retrieval.answering.typed_answer import Statement as Statement  # the kinds import it from here
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import AnswerData
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan
from retrieval.question.reading import Read
from retrieval.retrievers.graph_facts import GraphReader

Recogniser = Callable[[Read], Plan | None]
Expected = dict[str, str]  # what a generated question's right answer holds (evals/kind_questions.py)


@dataclass(frozen=True)
class Stores:
    """What an executor reads: the graph (through the serving path's guard), the platform tables and the
    lexicons of the served index."""

    graph: GraphReader
    engine: Engine | None
    genes: GeneLexicon
    pathways: PathwayLexicon
    settings: FluxSettings | None = None  # which source mode answers live questions, and its endpoints


@dataclass(frozen=True)
class Referents:
    """What a later turn may refer to ("its sub-pathways", "those genes"): pathway ids and gene symbols."""

    pathways: list[str] = field(default_factory=list)
    genes: list[str] = field(default_factory=list)


def _no_table(data: Any) -> DataTable | None:
    return None


def _no_referents(data: Any) -> Referents:
    return Referents()


def _accepts_nothing(plan: Plan) -> bool:
    return False


@dataclass(frozen=True)
class QuestionKind:
    name: str
    # (priority, recogniser): every kind's recognisers run in priority order, the first plan wins.
    recognisers: Sequence[tuple[int, Recogniser]] = ()
    # Which plans proposed by an LLM this kind executes (the rules' plans name their kind).
    accepts: Callable[[Plan], bool] = _accepts_nothing
    # Facts for the plan (None: not a typed kind — answered from text evidence).
    facts: Callable[[Plan, Stores], AnswerData] | None = None
    statements: Callable[[Any], list[Statement]] | None = None
    table: Callable[[Any], DataTable | None] = _no_table
    appendix: Callable[[Any], str] = lambda data: ""  # text after the prose that no claim states (a table)
    refers_to: Callable[[Any], Referents] = _no_referents
    grade: Callable[[FinalAnswer, Expected], bool] | None = None
    needs_graph: bool = True  # False: read from the tables alone (works with Neo4j down)
    abstains: bool = False  # True: its answer says what Flux does not hold (confidence 0)
    # Its facts hold nothing for what was asked ("ClinVar links no gene to …"): answered like an abstaining kind.
    holds_nothing: Callable[[Any], bool] = lambda data: False
    # Its facts were read live from a provider at question time (today's counts): never served from the cache.
    read_live: Callable[[Any], bool] = lambda data: False


def table(caption: str, columns: list[str], rows: Sequence[Sequence[object]], of: str = "entry") -> DataTable:
    return DataTable(
        caption=caption,
        of=of,
        columns=columns,  # type: ignore[arg-type]
        rows=[["" if v is None else str(v) for v in r] for r in rows],
    )


def expected_set(expected: Expected, key: str = "expected") -> set[str]:
    return {e for e in expected.get(key, "").split("|") if e}
