"""What the served release of a pathway's source changed for that pathway, read from the release history
(`release_changes`, written by the release assets): the facts of a `release_changes` answer."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import Engine, text

from retrieval.model.answer_data import NodeRef, ReleaseChangesData
from retrieval.model.plan import Entity

_SERVED = (
    "SELECT release_key FROM source_releases WHERE source = :source AND served_at IS NOT NULL"
    " ORDER BY served_at DESC LIMIT 2"
)
_CHANGES = (
    "SELECT change_kind, detail FROM release_changes WHERE source = :source AND from_key = :before"
    " AND to_key = :after AND subject_id = :pathway"
)


def release_changes(engine: Engine, pathway: Entity) -> ReleaseChangesData:
    node = NodeRef(id=pathway.id, name=pathway.name, source=pathway.source)
    with engine.connect() as conn:
        served = [r.release_key for r in conn.execute(text(_SERVED), {"source": pathway.source})]
        if len(served) < 2:
            return ReleaseChangesData(pathway=node, release=served[0] if served else "unknown", change="no_previous")
        rows = {
            r.change_kind: r.detail
            for r in conn.execute(
                text(_CHANGES),
                {"source": pathway.source, "before": served[1], "after": served[0], "pathway": pathway.id},
            )
        }
    data = ReleaseChangesData(pathway=node, release=served[0], previous_release=served[1], change="unchanged")
    if "pathway_added" in rows:
        return data.model_copy(update={"change": "added"})
    members = rows.get("members_changed", {})
    renamed = rows.get("pathway_renamed", {})
    if members or renamed:
        data = data.model_copy(
            update={
                "change": "changed",
                "renamed_from": renamed.get("before", ""),
                "gained": members.get("gained", []),
                "lost": members.get("lost", []),
                "genes_renamed": members.get("genes_renamed", 0),
            }
        )
    return data


class PathwayMove(BaseModel):
    pathway_id: str
    name: str = ""
    gained: int
    lost: int


class SourceChanges(BaseModel):
    source: str
    release: str = Field(description="The served release.")
    previous_release: str = Field(default="", description="The release served before it; empty when none is kept.")
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="Changes of each kind (pathway_added, "
        "members_changed, gene_renamed …) from the previous release to this one.",
    )
    largest: list[PathwayMove] = Field(default_factory=list, description="The pathways whose gene members moved most.")


class ReleaseChanges(BaseModel):
    sources: list[SourceChanges]


_SERVED_ALL = (
    "SELECT source, release_key, row_number() OVER (PARTITION BY source ORDER BY served_at DESC) AS n"
    " FROM source_releases WHERE served_at IS NOT NULL"
)
_COUNTS = (
    "SELECT change_kind, count(*) AS n FROM release_changes WHERE source = :source AND from_key = :before"
    " AND to_key = :after GROUP BY change_kind ORDER BY change_kind"
)
_LARGEST = (
    "SELECT subject_id, detail ->> 'name' AS name, jsonb_array_length(detail -> 'gained') AS gained,"
    " jsonb_array_length(detail -> 'lost') AS lost FROM release_changes WHERE source = :source"
    " AND from_key = :before AND to_key = :after AND change_kind = 'members_changed'"
    " ORDER BY jsonb_array_length(detail -> 'gained') + jsonb_array_length(detail -> 'lost') DESC,"
    " subject_id LIMIT :limit"
)


def latest_changes(engine: Engine, limit: int = 5) -> ReleaseChanges:
    """What the last refresh of each kept source changed: its served release against the one served before."""
    with engine.connect() as conn:
        served: dict[str, list[str]] = {}
        for row in conn.execute(text(_SERVED_ALL)):
            if row.n <= 2:
                served.setdefault(row.source, []).append(row.release_key)
        out = []
        for source, keys in sorted(served.items()):
            if len(keys) < 2:
                out.append(SourceChanges(source=source, release=keys[0]))
                continue
            pair = {"source": source, "before": keys[1], "after": keys[0]}
            counts = {r.change_kind: r.n for r in conn.execute(text(_COUNTS), pair)}
            largest = [
                PathwayMove(pathway_id=r.subject_id, name=r.name or "", gained=r.gained, lost=r.lost)
                for r in conn.execute(text(_LARGEST), {**pair, "limit": limit})
            ]
            out.append(
                SourceChanges(source=source, release=keys[0], previous_release=keys[1], counts=counts, largest=largest)
            )
    return ReleaseChanges(sources=out)
