"""Questions read into plans, and the facts of kinds that need no graph, for pure-logic tests (no services)."""

from __future__ import annotations

from retrieval.kinds import registry
from retrieval.kinds.base import Stores
from retrieval.model.answer_data import AnswerData
from retrieval.model.genes import GeneLexicon
from retrieval.model.pathways import PathwayLexicon
from retrieval.model.plan import Plan

_READ = registry.read_question  # the rules' reader, kept when a test swaps in a worse one


def read(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    return _READ(question, genes, pathways)


def table_facts(plan: Plan, genes: GeneLexicon, pathways: PathwayLexicon) -> AnswerData:
    """The facts of a kind read from the tables alone (gene facts, not found, scope), without a graph."""
    kind = registry.kind(plan.kind)
    assert kind.facts is not None and not kind.needs_graph, f"{plan.kind} reads the graph"
    return kind.facts(plan, Stores(graph=None, engine=None, genes=genes, pathways=pathways))  # type: ignore[arg-type]


# The six kinds the parser had before gene facts, counts, compounds, set operations, overviews, yes/no checks and
# "not found".
OLD_KINDS = {"members", "gene_pathways", "counterpart", "shared_genes", "compare", "hierarchy", "literature"}


def six_kinds(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    """A deliberately worse parser: today's rules, but counts and hierarchy directions forgotten and anything outside
    the six old kinds read as literature."""
    plan = _READ(question, genes, pathways)
    if plan.kind in OLD_KINDS:
        hierarchy = plan.kind == "hierarchy"
        operation = "describe" if hierarchy else plan.operation.replace("count", "list")
        return plan.model_copy(
            update={
                "counted": False,
                "subjects": plan.entities if hierarchy else plan.subjects,
                "objects": [] if hierarchy else plan.objects,
                "operation": operation,
            }
        )
    return Plan(kind="literature", operation="search", subjects=plan.entities, reason="not a kind this parser knows")


def members_of_any_pathway(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Plan:
    """A deliberately greedy kind: any question that names exactly one pathway is read as a list of its members, on
    that one name alone (today's rules otherwise)."""
    plan = _READ(question, genes, pathways)
    named = plan.of_type("pathway")
    if plan.kind == "members" or len(named) != 1:
        return plan
    return Plan(
        kind="members", operation="list", relation="member_of", objects=named, returns="gene", reason="a pathway named"
    )
