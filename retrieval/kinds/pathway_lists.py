"""What two kinds share for "the pathways that hold X" (genes: gene_pathways; compounds: compound_pathways): the
wording (a count when asked, then each database's pathways, smallest first), the table and the grader."""

from __future__ import annotations

from retrieval.answering.typed_answer import SOURCE_LABEL, listing
from retrieval.kinds.base import Expected, Statement, expected_set, table
from retrieval.kinds.members import count_stated
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import CompoundPathwaysData, GenePathwaysData, NodeRef


def pathways_holding(what: str, cited: list[str], pathways: list[NodeRef], source: str, count: bool) -> list[Statement]:
    label = f"{SOURCE_LABEL[source]} " if source in SOURCE_LABEL else ""
    if not pathways:
        return [
            (
                f"0 {label}pathways in the graph contain {what}."
                if count
                else f"No {label}pathway in the graph contains {what}.",
                cited,
            )
        ]
    out = [(f"{len(pathways)} {label}pathways contain {what}.", cited)] if count else []
    for db in ("kegg", "reactome"):
        mine = [f'{p.id} "{p.name}"' for p in pathways if p.source == db]
        if mine:
            out.append(
                (
                    f"In {SOURCE_LABEL[db]}, {len(mine)} pathways contain {what} (smallest first): "
                    f"{listing(mine, 25)}.",
                    cited,
                )
            )
    return out


def pathways_table(caption: str, pathways: list[NodeRef]) -> DataTable:
    return table(
        caption, ["id", "name", "source", "genes"], [[p.id, p.name, p.source, p.size] for p in pathways], of="pathway"
    )


def grade_pathways(answer: FinalAnswer, expected: Expected) -> bool:
    """The exact set of pathways, and a count's number stated and equal to it."""
    data = answer.data
    return (
        isinstance(data, GenePathwaysData | CompoundPathwaysData)
        and {p.id for p in data.pathways} == expected_set(expected)
        and count_stated(answer, expected, data.total)
    )
