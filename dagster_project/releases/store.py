"""Release history in Postgres: capture a release's facts once, mark which release serves, read two back to diff.

A release is captured in one transaction keyed by (source, release key), so capturing it again (a rerun, a retry,
a past release loaded a second time) writes nothing. `served_at` moves when a release's rows become the served
ones; the release a refresh is compared with is the one served most recently before it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, text

from dagster_project.releases.associations import Association
from dagster_project.releases.diff import Edge, Gene, ReleaseFacts
from dagster_project.sources.model import DiseaseAssociationRecord, GeneRecord, ParseResult
from dagster_project.sources.raw import Manifest
from dagster_project.storage.bulk import copy_into_temp


def release_key(manifest: Manifest) -> str:
    """The provider's label and a digest of the files' contents: each raw-zone file name carries its content hash;
    the folder (the pull date) is left out, so the same files pulled on another day are the same release."""
    names = sorted(path.rsplit("/", 1)[-1] for path in manifest.files.values())
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:8]
    return f"{manifest.release} #{digest}"


def _claim(
    conn: Connection, source: str, key: str, manifest: Manifest, mode: str, counts: dict[str, int]
) -> int | None:
    """The new release's id, or None when (source, key) is kept already."""
    return conn.execute(
        text("""
        INSERT INTO source_releases (source, release_key, release, dataset_version, mode, pathway_count,
                                     member_count, gene_count)
        VALUES (:source, :key, :release, :dv, :mode, :pathways, :members, :genes)
        ON CONFLICT (source, release_key) DO NOTHING
        RETURNING release_id
    """),
        {
            "source": source,
            "key": key,
            "release": manifest.release,
            "dv": manifest.dataset_version,
            "mode": mode,
            "pathways": counts.get("pathways", 0),
            "members": counts.get("members", 0),
            "genes": counts.get("genes", 0),
        },
    ).scalar_one_or_none()


def is_kept(engine: Engine, source: str, key: str) -> bool:
    with engine.connect() as conn:
        return (
            conn.execute(
                text("SELECT 1 FROM source_releases WHERE source = :s AND release_key = :k"), {"s": source, "k": key}
            ).first()
            is not None
        )


def capture_pathways(engine: Engine, source: str, manifest: Manifest, mode: str, records: ParseResult) -> bool:
    """Keep one release of a pathway source: pathways, names (NULL where the release names none — a pathway named
    by its id), parents and gene members of listed pathways. False when it was already kept."""
    key = release_key(manifest)
    listed = {p.id for p in records.pathways}
    members = {
        (m.pathway_id, m.id_space, m.member_id)
        for m in records.members
        if m.member_kind == "gene" and m.pathway_id in listed
    }
    with engine.begin() as conn:
        release_id = _claim(conn, source, key, manifest, mode, {"pathways": len(listed), "members": len(members)})
        if release_id is None:
            return False
        copy_into_temp(
            conn,
            "release_pathways_in",
            [("pathway_id", "text"), ("name", "text"), ("parents", "text[]")],
            (
                (p.id, None if p.name == p.id else p.name, list(p.parents))
                for p in {p.id: p for p in records.pathways}.values()
            ),
        )
        conn.execute(
            text(
                "INSERT INTO release_pathways (release_id, pathway_id, name, parents)"
                " SELECT :id, pathway_id, name, parents FROM release_pathways_in"
            ),
            {"id": release_id},
        )
        copy_into_temp(
            conn,
            "release_members_in",
            [("pathway_id", "text"), ("id_space", "text"), ("member_id", "text")],
            sorted(members),
        )
        conn.execute(
            text(
                "INSERT INTO release_members (release_id, pathway_id, id_space, member_id)"
                " SELECT :id, pathway_id, id_space, member_id FROM release_members_in"
            ),
            {"id": release_id},
        )
    return True


def capture_genes(engine: Engine, manifest: Manifest, mode: str, genes: list[GeneRecord]) -> bool:
    key = release_key(manifest)
    unique = {g.hgnc_id: g for g in genes}
    with engine.begin() as conn:
        release_id = _claim(conn, "hgnc", key, manifest, mode, {"genes": len(unique)})
        if release_id is None:
            return False
        copy_into_temp(
            conn,
            "release_genes_in",
            [
                ("hgnc_id", "text"),
                ("symbol", "text"),
                ("previous_symbols", "text[]"),
                ("entrez_id", "text"),
                ("uniprot_ids", "text[]"),
            ],
            (
                (g.hgnc_id, g.symbol, list(g.previous_symbols), g.entrez_id, list(g.uniprot_ids))
                for g in unique.values()
            ),
        )
        conn.execute(
            text(
                "INSERT INTO release_genes (release_id, hgnc_id, symbol, previous_symbols, entrez_id,"
                " uniprot_ids) SELECT :id, * FROM release_genes_in"
            ),
            {"id": release_id},
        )
    return True


def capture_associations(
    engine: Engine, manifest: Manifest, mode: str, associations: list[DiseaseAssociationRecord]
) -> bool:
    """Keep one ClinVar release: its associations keyed by NCBI Gene id, MedGen concept and asserting source (a row
    the file repeats is kept once). False when it was already kept."""
    key = release_key(manifest)
    unique = {(a.gene_entrez_id, a.concept_id, a.source_name): a for a in associations}
    with engine.begin() as conn:
        release_id = _claim(conn, "clinvar", key, manifest, mode, {"genes": len({k[0] for k in unique})})
        if release_id is None:
            return False
        conn.execute(
            text("UPDATE source_releases SET association_count = :n WHERE release_id = :id"),
            {"n": len(unique), "id": release_id},
        )
        copy_into_temp(
            conn,
            "release_associations_in",
            [
                ("entrez_id", "text"),
                ("concept_id", "text"),
                ("source_name", "text"),
                ("gene_symbol", "text"),
                ("disease_name", "text"),
            ],
            ((*k, a.gene_symbol, a.disease_name) for k, a in unique.items()),
        )
        conn.execute(
            text(
                "INSERT INTO release_associations (release_id, entrez_id, concept_id, source_name,"
                " gene_symbol, disease_name) SELECT :id, * FROM release_associations_in"
            ),
            {"id": release_id},
        )
    return True


# The served release of a source, and of the resolution: one query each, no table name spliced in.
_LATEST_SERVED = {
    "source": "SELECT release_key FROM source_releases WHERE source = :source AND served_at IS NOT NULL"
    " AND release_key <> :key ORDER BY served_at DESC LIMIT 1",
    "resolution": "SELECT release_key FROM resolution_releases WHERE served_at IS NOT NULL"
    " AND release_key <> :key ORDER BY served_at DESC LIMIT 1",
}
_SERVE = {
    "source": "UPDATE source_releases SET served_at = clock_timestamp() WHERE source = :source AND release_key = :key",
    "resolution": "UPDATE resolution_releases SET served_at = clock_timestamp() WHERE release_key = :key",
}


def _scope(source: str) -> str:
    return "resolution" if source == "resolution" else "source"


def _served_before(conn: Connection, source: str, key: str) -> str | None:
    """The release served most recently, other than `key`."""
    return conn.execute(text(_LATEST_SERVED[_scope(source)]), {"source": source, "key": key}).scalar_one_or_none()


def mark_served(engine: Engine, source: str, key: str) -> None:
    """The release whose rows the served tables now hold (a documents load, a resolution build). Loading the
    release that serves already changes nothing, so a rerun leaves the history as it was."""
    with engine.begin() as conn:
        if _served_before(conn, source, "") != key:
            conn.execute(text(_SERVE[_scope(source)]), {"source": source, "key": key})


def previous_release(engine: Engine, source: str, key: str) -> str | None:
    """The release `key` is compared with: the one served most recently, other than `key` itself."""
    with engine.connect() as conn:
        return _served_before(conn, source, key)


def served_release(engine: Engine, source: str) -> str | None:
    with engine.connect() as conn:
        return _served_before(conn, source, "")


class UnknownReleaseError(LookupError):
    """A release key no source has kept."""


def _release_id(conn: Connection, source: str, key: str) -> int:
    found = conn.execute(
        text("SELECT release_id FROM source_releases WHERE source = :s AND release_key = :k"), {"s": source, "k": key}
    ).scalar_one_or_none()
    if found is None:
        raise UnknownReleaseError(f"no {source} release {key!r} is kept (`flux releases list` shows those that are)")
    return found


def load_facts(engine: Engine, source: str, key: str) -> ReleaseFacts:
    with engine.connect() as conn:
        release_id = _release_id(conn, source, key)
        names = {
            r.pathway_id: r.name
            for r in conn.execute(
                text("SELECT pathway_id, name FROM release_pathways WHERE release_id = :id"), {"id": release_id}
            )
        }
        members: dict[str, set[tuple[str, str]]] = {}
        for r in conn.execute(
            text("SELECT pathway_id, id_space, member_id FROM release_members WHERE release_id = :id"),
            {"id": release_id},
        ):
            members.setdefault(r.pathway_id, set()).add((r.id_space, r.member_id))
    return ReleaseFacts(source, key, names, {pid: frozenset(m) for pid, m in members.items()})


def load_genes(engine: Engine, key: str) -> list[Gene]:
    with engine.connect() as conn:
        release_id = _release_id(conn, "hgnc", key)
        return [
            Gene(r.hgnc_id, r.symbol, tuple(r.previous_symbols), r.entrez_id, tuple(r.uniprot_ids))
            for r in conn.execute(
                text(
                    "SELECT hgnc_id, symbol, previous_symbols, entrez_id, uniprot_ids"
                    " FROM release_genes WHERE release_id = :id"
                ),
                {"id": release_id},
            )
        ]


def load_associations(engine: Engine, key: str) -> list[Association]:
    with engine.connect() as conn:
        release_id = _release_id(conn, "clinvar", key)
        return [
            Association(r.entrez_id, r.concept_id, r.source_name, r.gene_symbol, r.disease_name)
            for r in conn.execute(
                text(
                    "SELECT entrez_id, concept_id, source_name, gene_symbol, disease_name"
                    " FROM release_associations WHERE release_id = :id"
                ),
                {"id": release_id},
            )
        ]


def gene_release_for_diff(engine: Engine) -> str | None:
    """The HGNC release members are placed with: the served one, else the last kept."""
    with engine.connect() as conn:
        return conn.execute(
            text(
                "SELECT release_key FROM source_releases WHERE source = 'hgnc'"
                " ORDER BY served_at DESC NULLS LAST, first_loaded_at DESC LIMIT 1"
            )
        ).scalar_one_or_none()


def write_changes(
    engine: Engine, source: str, from_key: str, to_key: str, rows: list[tuple[str, str, dict[str, Any]]]
) -> int:
    """Make the changes recorded for one (from, to) pair exactly `rows`, in one transaction; a row already recorded
    with the same detail is left as it is."""
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "release_changes_in",
            [("change_kind", "text"), ("subject_id", "text"), ("detail", "jsonb")],
            ((kind, subject, json.dumps(detail, sort_keys=True)) for kind, subject, detail in rows),
        )
        pair = {"s": source, "f": from_key, "t": to_key}
        conn.execute(
            text("""
            DELETE FROM release_changes c WHERE c.source = :s AND c.from_key = :f AND c.to_key = :t
              AND NOT EXISTS (SELECT 1 FROM release_changes_in i
                              WHERE i.change_kind = c.change_kind AND i.subject_id = c.subject_id)
        """),
            pair,
        )
        conn.execute(
            text("""
            INSERT INTO release_changes (source, from_key, to_key, change_kind, subject_id, detail)
            SELECT :s, :f, :t, change_kind, subject_id, detail FROM release_changes_in
            ON CONFLICT (source, from_key, to_key, change_kind, subject_id) DO UPDATE
                SET detail = EXCLUDED.detail, computed_at = now()
                WHERE release_changes.detail IS DISTINCT FROM EXCLUDED.detail
        """),
            pair,
        )
    return len(rows)


@dataclass(frozen=True)
class ReleaseRow:
    source: str
    release_key: str
    first_loaded_at: str
    served_at: str | None
    pathways: int
    members: int
    genes: int


def list_releases(engine: Engine) -> list[ReleaseRow]:
    with engine.connect() as conn:
        return [
            ReleaseRow(
                r.source,
                r.release_key,
                f"{r.first_loaded_at:%Y-%m-%d %H:%M:%S}",
                f"{r.served_at:%Y-%m-%d %H:%M:%S}" if r.served_at else None,
                r.pathway_count,
                r.member_count,
                r.gene_count,
            )
            for r in conn.execute(text("SELECT * FROM source_releases ORDER BY source, first_loaded_at"))
        ]


def capture_resolution(engine: Engine, source_keys: dict[str, str], method_version: str) -> tuple[str, bool]:
    """Keep the served resolution's equivalence and part-of edges under a key naming the releases it read."""
    key = (
        "resolution "
        + hashlib.sha256(json.dumps([source_keys, method_version], sort_keys=True).encode()).hexdigest()[:12]
    )
    with engine.begin() as conn:
        created = conn.execute(
            text("""
            INSERT INTO resolution_releases (release_key, source_keys, method_version, edge_count)
            SELECT :key, CAST(:keys AS jsonb), :method, count(*) FROM pathway_mappings WHERE relation <> 'unrelated'
            ON CONFLICT (release_key) DO NOTHING RETURNING 1
        """),
            {"key": key, "keys": json.dumps(source_keys, sort_keys=True), "method": method_version},
        ).first()
        if created:
            conn.execute(
                text(
                    "INSERT INTO release_equivalences (release_key, reactome_id, kegg_id, relation)"
                    " SELECT :key, reactome_id, kegg_id, relation FROM pathway_mappings"
                    " WHERE relation <> 'unrelated'"
                ),
                {"key": key},
            )
    return key, created is not None


def load_edges(engine: Engine, key: str) -> dict[Edge, str]:
    with engine.connect() as conn:
        return {
            (r.reactome_id, r.kegg_id): r.relation
            for r in conn.execute(
                text("SELECT reactome_id, kegg_id, relation FROM release_equivalences WHERE release_key = :k"),
                {"k": key},
            )
        }
