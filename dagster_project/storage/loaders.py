"""Idempotent loads of normalized source records into Postgres.

Upserts on natural keys; a row is rewritten only when its hash changed; a record gone from the source is marked
`gone`, never deleted; each load is one transaction, so a retried run never duplicates or half-writes anything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, text

from dagster_project.sources.model import (
    Document,
    GeneRecord,
    MemberRecord,
    PathwayRecord,
    Quarantined,
    ReactionParticipantRecord,
    ReactionRecord,
    ReactionStepRecord,
    content_hash,
)
from dagster_project.sources.raw import Manifest
from dagster_project.storage.bulk import copy_into_temp


@dataclass(frozen=True)
class LoadCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    marked_gone: int = 0


_DOC_COLUMNS = [
    ("type", "text"),
    ("source", "text"),
    ("external_id", "text"),
    ("title", "text"),
    ("content", "text"),
    ("metadata", "jsonb"),
    ("content_hash", "text"),
]


def upsert_documents(engine: Engine, source: str, docs: list[Document], dataset_version: str) -> LoadCounts:
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "docs_in",
            _DOC_COLUMNS,
            (
                (
                    d.type,
                    d.source,
                    d.external_id,
                    d.title,
                    d.content,
                    json.dumps(d.metadata, sort_keys=True),
                    d.content_hash,
                )
                for d in docs
            ),
        )
        inserted, updated = conn.execute(
            text("""
            WITH up AS (
                INSERT INTO documents (type, source, external_id, title, content, metadata, content_hash,
                                       dataset_version)
                SELECT type, source, external_id, title, content, metadata, content_hash, :dv FROM docs_in
                ON CONFLICT (source, external_id) DO UPDATE SET
                    type = EXCLUDED.type, title = EXCLUDED.title, content = EXCLUDED.content,
                    metadata = EXCLUDED.metadata, content_hash = EXCLUDED.content_hash,
                    dataset_version = EXCLUDED.dataset_version, status = 'active', gone_at = NULL,
                    updated_at = now()
                WHERE documents.content_hash IS DISTINCT FROM EXCLUDED.content_hash
                   OR documents.status <> 'active'
                RETURNING (xmax = 0) AS inserted)
            SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
        """),
            {"dv": dataset_version},
        ).one()
        gone = _mark_documents_gone(conn, source) if docs else 0
    return LoadCounts(inserted, updated, len(docs) - inserted - updated, gone)


def _mark_documents_gone(conn, source: str) -> int:  # type: ignore[no-untyped-def]
    return conn.execute(
        text("""
        UPDATE documents d SET status = 'gone', gone_at = now(), updated_at = now()
        WHERE d.source = :source AND d.status = 'active'
          AND NOT EXISTS (SELECT 1 FROM docs_in i WHERE i.external_id = d.external_id)
    """),
        {"source": source},
    ).rowcount


def _pathway_hash(p: PathwayRecord) -> str:
    return content_hash(p.name, p.species, sorted(p.parents), p.category, p.subcategory)


def replace_pathways(
    engine: Engine,
    source: str,
    pathways: list[PathwayRecord],
    members: list[MemberRecord],
    reactions: list[ReactionRecord],
    dataset_version: str,
    participants: Sequence[ReactionParticipantRecord] = (),
    steps: Sequence[ReactionStepRecord] = (),
) -> LoadCounts:
    """Upsert the pathways of one source and make its member set exactly `members`; upsert its reactions and make
    each one's participants and following steps exactly those given (one transaction)."""
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "pathways_in",
            [
                ("pathway_id", "text"),
                ("name", "text"),
                ("species", "text"),
                ("parents", "text[]"),
                ("category", "text"),
                ("subcategory", "text"),
                ("row_hash", "text"),
            ],
            ((p.id, p.name, p.species, list(p.parents), p.category, p.subcategory, _pathway_hash(p)) for p in pathways),
        )
        inserted, updated = conn.execute(
            text("""
            WITH up AS (
                INSERT INTO pathways (pathway_id, source, name, species, parents, category, subcategory, row_hash,
                                      dataset_version)
                SELECT pathway_id, :source, name, species, parents, category, subcategory, row_hash, :dv
                FROM pathways_in
                ON CONFLICT (pathway_id) DO UPDATE SET
                    name = EXCLUDED.name, species = EXCLUDED.species, parents = EXCLUDED.parents,
                    category = EXCLUDED.category, subcategory = EXCLUDED.subcategory, row_hash = EXCLUDED.row_hash,
                    dataset_version = EXCLUDED.dataset_version, status = 'active', updated_at = now()
                WHERE pathways.row_hash <> EXCLUDED.row_hash OR pathways.status <> 'active'
                RETURNING (xmax = 0) AS inserted)
            SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
        """),
            {"source": source, "dv": dataset_version},
        ).one()
        gone = (
            conn.execute(
                text("""
            UPDATE pathways p SET status = 'gone', updated_at = now()
            WHERE p.source = :source AND p.status = 'active'
              AND NOT EXISTS (SELECT 1 FROM pathways_in i WHERE i.pathway_id = p.pathway_id)
        """),
                {"source": source},
            ).rowcount
            if pathways
            else 0
        )
        _replace_members(conn, source, members)
        _upsert_reactions(conn, reactions)
        _replace_reaction_details(conn, [r.id for r in reactions], participants, steps)
    return LoadCounts(inserted, updated, len(pathways) - inserted - updated, gone)


def _replace_members(conn, source: str, members: list[MemberRecord]) -> None:  # type: ignore[no-untyped-def]
    copy_into_temp(
        conn,
        "members_in",
        [("pathway_id", "text"), ("member_kind", "text"), ("id_space", "text"), ("member_id", "text")],
        ((m.pathway_id, m.member_kind, m.id_space, m.member_id) for m in members),
    )
    conn.execute(
        text("""
        DELETE FROM pathway_members pm USING pathways p
        WHERE pm.pathway_id = p.pathway_id AND p.source = :source
          AND NOT EXISTS (SELECT 1 FROM members_in i WHERE i.pathway_id = pm.pathway_id
                          AND i.member_kind = pm.member_kind AND i.id_space = pm.id_space
                          AND i.member_id = pm.member_id)
    """),
        {"source": source},
    )
    conn.execute(
        text("""
        INSERT INTO pathway_members (pathway_id, member_kind, id_space, member_id)
        SELECT DISTINCT pathway_id, member_kind, id_space, member_id FROM members_in
        ON CONFLICT DO NOTHING
    """)
    )


def _upsert_reactions(conn, reactions: list[ReactionRecord]) -> None:  # type: ignore[no-untyped-def]
    if not reactions:
        return
    conn.execute(
        text("""
        INSERT INTO reactions (reaction_id, name, pathway_id, summary) VALUES (:id, :name, :pathway_id, :summary)
        ON CONFLICT (reaction_id) DO UPDATE SET name = EXCLUDED.name, pathway_id = EXCLUDED.pathway_id,
            summary = EXCLUDED.summary
        WHERE (reactions.name, reactions.pathway_id, reactions.summary)
              IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.pathway_id, EXCLUDED.summary)
    """),
        [{"id": r.id, "name": r.name, "pathway_id": r.pathway_id, "summary": r.summary} for r in reactions],
    )


def replace_reactions(
    engine: Engine,
    reactions: Sequence[ReactionRecord],
    participants: Sequence[ReactionParticipantRecord],
    steps: Sequence[ReactionStepRecord],
) -> None:
    """Upsert reactions and make each one's participants and following steps exactly those given (one
    transaction); every reaction's pathway must be in the pathways table."""
    with engine.begin() as conn:
        _upsert_reactions(conn, list(reactions))
        _replace_reaction_details(conn, [r.id for r in reactions], participants, steps)


def _replace_reaction_details(
    conn,
    reaction_ids: list[str],  # type: ignore[no-untyped-def]
    participants: Sequence[ReactionParticipantRecord],
    steps: Sequence[ReactionStepRecord],
) -> None:
    """The loaded reactions' participants and following steps become exactly the given ones: rows that went are
    deleted, new ones inserted, unchanged ones left alone (a second load writes nothing)."""
    if not reaction_ids:
        return
    copy_into_temp(conn, "loaded_reactions", [("reaction_id", "text")], ((i,) for i in dict.fromkeys(reaction_ids)))
    copy_into_temp(
        conn,
        "participants_in",
        [
            ("reaction_id", "text"),
            ("role", "text"),
            ("entity_kind", "text"),
            ("entity_id", "text"),
            ("name", "text"),
            ("components", "text[]"),
        ],
        (
            (p.reaction_id, p.role, p.entity_kind, p.entity_id, p.name, list(p.components))
            for p in dict.fromkeys(participants)
        ),
    )
    conn.execute(
        text("""
        DELETE FROM reaction_participants rp USING loaded_reactions l
        WHERE rp.reaction_id = l.reaction_id
          AND NOT EXISTS (SELECT 1 FROM participants_in i WHERE (i.reaction_id, i.role, i.entity_id, i.entity_kind,
                          i.name, i.components) = (rp.reaction_id, rp.role, rp.entity_id, rp.entity_kind, rp.name,
                          rp.components))
    """)
    )
    conn.execute(
        text("""
        INSERT INTO reaction_participants (reaction_id, role, entity_kind, entity_id, name, components)
        SELECT DISTINCT ON (i.reaction_id, i.role, i.entity_id) i.reaction_id, i.role, i.entity_kind, i.entity_id,
               i.name, i.components
        FROM participants_in i JOIN loaded_reactions l USING (reaction_id)
        ORDER BY i.reaction_id, i.role, i.entity_id
        ON CONFLICT DO NOTHING
    """)
    )
    copy_into_temp(
        conn,
        "steps_in",
        [("preceding_id", "text"), ("following_id", "text")],
        ((s.preceding_id, s.following_id) for s in dict.fromkeys(steps)),
    )
    conn.execute(
        text("""
        DELETE FROM reaction_steps rs USING loaded_reactions l
        WHERE rs.preceding_id = l.reaction_id
          AND NOT EXISTS (SELECT 1 FROM steps_in i WHERE (i.preceding_id, i.following_id)
                          = (rs.preceding_id, rs.following_id))
    """)
    )
    conn.execute(
        text("""
        INSERT INTO reaction_steps (preceding_id, following_id)
        SELECT DISTINCT i.preceding_id, i.following_id FROM steps_in i
        JOIN reactions a ON a.reaction_id = i.preceding_id JOIN reactions b ON b.reaction_id = i.following_id
        ON CONFLICT DO NOTHING
    """)
    )


def _gene_hash(g: GeneRecord) -> str:
    return content_hash(
        g.symbol,
        g.name,
        g.status,
        g.aliases,
        g.previous_symbols,
        g.entrez_id,
        g.uniprot_ids,
        g.locus_type,
        g.ensembl_gene_id,
        g.location,
    )


def upsert_genes(engine: Engine, genes: list[GeneRecord], dataset_version: str) -> LoadCounts:
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "genes_in",
            [
                ("hgnc_id", "text"),
                ("symbol", "text"),
                ("name", "text"),
                ("status", "text"),
                ("aliases", "text[]"),
                ("previous_symbols", "text[]"),
                ("entrez_id", "text"),
                ("uniprot_ids", "text[]"),
                ("locus_type", "text"),
                ("ensembl_gene_id", "text"),
                ("location", "text"),
                ("row_hash", "text"),
            ],
            (
                (
                    g.hgnc_id,
                    g.symbol,
                    g.name,
                    g.status,
                    list(g.aliases),
                    list(g.previous_symbols),
                    g.entrez_id,
                    list(g.uniprot_ids),
                    g.locus_type,
                    g.ensembl_gene_id,
                    g.location,
                    _gene_hash(g),
                )
                for g in genes
            ),
        )
        inserted, updated = conn.execute(
            text("""
            WITH up AS (
                INSERT INTO gene_identifiers (hgnc_id, symbol, name, status, aliases, previous_symbols, entrez_id,
                                              uniprot_ids, locus_type, ensembl_gene_id, location, row_hash,
                                              dataset_version)
                SELECT hgnc_id, symbol, name, status, aliases, previous_symbols, entrez_id, uniprot_ids, locus_type,
                       ensembl_gene_id, location, row_hash, :dv FROM genes_in
                ON CONFLICT (hgnc_id) DO UPDATE SET
                    symbol = EXCLUDED.symbol, name = EXCLUDED.name, status = EXCLUDED.status,
                    aliases = EXCLUDED.aliases, previous_symbols = EXCLUDED.previous_symbols,
                    entrez_id = EXCLUDED.entrez_id, uniprot_ids = EXCLUDED.uniprot_ids,
                    locus_type = EXCLUDED.locus_type, ensembl_gene_id = EXCLUDED.ensembl_gene_id,
                    location = EXCLUDED.location, row_hash = EXCLUDED.row_hash,
                    dataset_version = EXCLUDED.dataset_version, updated_at = now()
                WHERE gene_identifiers.row_hash <> EXCLUDED.row_hash
                RETURNING (xmax = 0) AS inserted)
            SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
        """),
            {"dv": dataset_version},
        ).one()
    return LoadCounts(inserted, updated, len(genes) - inserted - updated)


def replace_kegg_uniprot(engine: Engine, mapping: dict[str, list[str]]) -> int:
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "conv_in",
            [("entrez_id", "text"), ("uniprot_id", "text")],
            ((e, u) for e, accs in mapping.items() for u in dict.fromkeys(accs)),
        )
        conn.execute(
            text(
                "DELETE FROM kegg_gene_uniprot k WHERE NOT EXISTS (SELECT 1 FROM conv_in i"
                " WHERE i.entrez_id = k.entrez_id AND i.uniprot_id = k.uniprot_id)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO kegg_gene_uniprot SELECT DISTINCT entrez_id, uniprot_id FROM conv_in"
                " ON CONFLICT DO NOTHING"
            )
        )
        return conn.execute(text("SELECT count(*) FROM kegg_gene_uniprot")).scalar_one()


def record_quarantine(engine: Engine, items: list[Quarantined], run_id: str) -> int:
    """One row per (source, record, reason), written when it is first met, and one sighting per raw pull that held
    it: a rerun over the same pull changes no row."""
    if not items:
        return 0
    rows = [
        {
            "source": q.source,
            "record_key": q.record_key,
            "raw_ref": q.raw_ref,
            "reason": q.reason,
            "payload": q.payload,
            "run_id": run_id,
        }
        for q in items
    ]
    with engine.begin() as conn:
        conn.execute(
            text("""
            INSERT INTO quarantine (source, record_key, raw_ref, reason, payload, run_id)
            VALUES (:source, :record_key, :raw_ref, :reason, :payload, :run_id)
            ON CONFLICT (source, record_key, reason) DO NOTHING
        """),
            rows,
        )
        conn.execute(
            text("""
            INSERT INTO quarantine_sightings (quarantine_id, raw_ref, run_id)
            SELECT id, :raw_ref, :run_id FROM quarantine
            WHERE source = :source AND record_key = :record_key AND reason = :reason
            ON CONFLICT (quarantine_id, raw_ref) DO NOTHING
        """),
            rows,
        )
    return len(items)


def record_raw_pull(engine: Engine, manifest: Manifest, mode: str, byte_count: int) -> None:
    with engine.begin() as conn:
        conn.execute(
            text("""
            INSERT INTO raw_pulls (source, retrieved_at, release, mode, manifest_uri, file_count, byte_count)
            VALUES (:source, :retrieved_at, :release, :mode, :uri, :files, :bytes)
            ON CONFLICT (source, retrieved_at) DO NOTHING
        """),
            {
                "source": manifest.source,
                "retrieved_at": manifest.retrieved_at,
                "release": manifest.release,
                "mode": mode,
                "uri": manifest.uri,
                "files": len(manifest.files),
                "bytes": byte_count,
            },
        )
