"""The wording two kinds share for "the pathways that hold X" (genes: gene_pathways; compounds: compound_pathways):
a count when asked, then each database's pathways, smallest first."""

from __future__ import annotations

from retrieval.answering.typed_answer import SOURCE_LABEL, listing
from retrieval.kinds.base import Statement
from retrieval.model.answer_data import NodeRef


def pathways_holding(what: str, cited: list[str], pathways: list[NodeRef], source: str, count: bool
                     ) -> list[Statement]:
    label = f"{SOURCE_LABEL[source]} " if source in SOURCE_LABEL else ""
    if not pathways:
        return [(f"0 {label}pathways in the graph contain {what}." if count
                 else f"No {label}pathway in the graph contains {what}.", cited)]
    out = [(f"{len(pathways)} {label}pathways contain {what}.", cited)] if count else []
    for db in ("kegg", "reactome"):
        mine = [f'{p.id} "{p.name}"' for p in pathways if p.source == db]
        if mine:
            out.append((f"In {SOURCE_LABEL[db]}, {len(mine)} pathways contain {what} (smallest first): "
                        f"{listing(mine, 25)}.", cited))
    return out
