"""`release_changes`: what the served release of a pathway's source changed for it — `P release_change` — read
from the release history (genes gained and lost, a former name, HGNC renames followed to the same gene)."""

from __future__ import annotations

from retrieval.answering.typed_answer import SOURCE_LABEL, listing, node_name
from retrieval.kinds.base import QuestionKind, Referents, Statement, Stores, table
from retrieval.model.answer import DataTable
from retrieval.model.answer_data import ReleaseChangesData
from retrieval.model.plan import Plan
from retrieval.question.reading import Read, pathway_entity, single_source
from retrieval.question.release_questions import asks_release_change
from retrieval.retrievers.release_history import release_changes


def recognise(read: Read) -> Plan | None:
    found = read.found or read.fuzzy(1)
    if not found or not asks_release_change(read.question):
        return None
    source = single_source(read.question)
    chosen = next((p for p in found if p.source == source), found[0])
    return Plan(
        kind="release_changes",
        operation="describe",
        relation="release_change",
        subjects=[pathway_entity(chosen)],
        reason=f"what the latest release changed in {chosen.id}",
    )


def accepts(plan: Plan) -> bool:
    return plan.relation == "release_change" and len(plan.subjects) == 1


def facts(plan: Plan, stores: Stores) -> ReleaseChangesData:
    if stores.engine is None:
        raise ValueError("release_changes facts are read from the platform database: pass its engine")
    return release_changes(stores.engine, plan.subjects[0])


def statements(data: ReleaseChangesData) -> list[Statement]:
    name, cited = node_name(data.pathway), [data.pathway.id]
    if data.change == "no_previous":
        return [
            (
                f"{name} comes from release {data.release}; no earlier release of "
                f"{SOURCE_LABEL.get(data.pathway.source, data.pathway.source)} is kept to compare it with.",
                cited,
            )
        ]
    if data.change == "added":
        return [(f"{name} is new in release {data.release}: release {data.previous_release} did not have it.", cited)]
    if data.change == "unchanged":
        return [
            (
                f"{name} has the same name and gene members in release {data.release} as in release "
                f"{data.previous_release}.",
                cited,
            )
        ]
    out = []
    if data.gained or data.lost:
        moved = [
            f"gained {len(data.gained)} genes ({listing(data.gained, 30)})" if data.gained else "",
            f"lost {len(data.lost)} genes ({listing(data.lost, 30)})" if data.lost else "",
        ]
        out.append(
            (
                f"From release {data.previous_release} to release {data.release}, {name} "
                f"{' and '.join(m for m in moved if m)}.",
                cited,
            )
        )
    if data.renamed_from:
        out.append((f'Its name changed: it was "{data.renamed_from}" in release {data.previous_release}.', cited))
    if data.genes_renamed:
        out.append(
            (
                f"{data.genes_renamed} of its member symbols were renamed by HGNC and count as the same "
                "genes, neither gained nor lost.",
                cited,
            )
        )
    return out


def data_table(data: ReleaseChangesData) -> DataTable:
    rows = [["release", data.release], ["previous release", data.previous_release or "none kept"]]
    rows += [["previous name", data.renamed_from]] if data.renamed_from else []
    rows += [["gained", g] for g in data.gained] + [["lost", g] for g in data.lost]
    rows += [["members renamed by HGNC", data.genes_renamed]] if data.genes_renamed else []
    return table(f"{data.pathway.name or data.pathway.id}: {data.change.replace('_', ' ')}", ["what", "value"], rows)


def refers_to(data: ReleaseChangesData) -> Referents:
    return Referents(pathways=[data.pathway.id])


KIND = QuestionKind(
    name="release_changes",
    recognisers=((30, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    needs_graph=False,
)
