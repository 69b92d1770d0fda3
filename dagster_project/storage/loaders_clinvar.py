"""ClinVar's gene-condition associations and their conditions in Postgres: the HGNC genes they are placed on, read
from `gene_identifiers`, and one transaction per load that makes `diseases` and `disease_associations` exactly the
given rows (upserted on their natural keys, rewritten only when a row's hash changed, rows gone from the file
deleted), so loading the same release twice changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

from dagster_project.sources.model import DiseaseAssociationRecord, DiseaseRecord, GeneRecord, content_hash
from dagster_project.storage.bulk import copy_into_temp
from dagster_project.vocabularies.mondo import ConditionSynonym


@dataclass(frozen=True)
class SynonymSource:
    """Where the loaded conditions' synonyms come from: a vocabulary's version, and the synonyms of given conditions."""

    version: str
    for_conditions: Callable[[list[DiseaseRecord]], list[ConditionSynonym]]


@dataclass(frozen=True)
class TableCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0

    @property
    def changed(self) -> int:
        return self.inserted + self.updated + self.deleted


def placement_genes(engine: Engine) -> list[GeneRecord]:
    """HGNC's genes as the hgnc documents asset loaded them: what ClinVar's genes are placed on."""
    with engine.connect() as conn:
        return [
            GeneRecord(r.hgnc_id, r.symbol, r.name, r.status, tuple(r.aliases), tuple(r.previous_symbols), r.entrez_id)
            for r in conn.execute(
                text("SELECT hgnc_id, symbol, name, status, aliases, previous_symbols, entrez_id FROM gene_identifiers")
            )
        ]


def _disease_hash(d: DiseaseRecord) -> str:
    return content_hash(d.name, d.mondo_id, d.omim_id)


def _association_hash(a: DiseaseAssociationRecord) -> str:
    return content_hash(
        a.gene_entrez_id, a.gene_symbol, a.disease_name, a.source_id, a.disease_mim, a.relation, a.last_updated
    )


def replace_associations(
    engine: Engine,
    diseases: list[DiseaseRecord],
    associations: list[DiseaseAssociationRecord],
    dataset_version: str,
    synonyms: SynonymSource | None = None,
) -> tuple[TableCounts, TableCounts, TableCounts]:
    """(diseases, associations, condition synonyms) counts. Nothing is deleted when no association is given: an
    empty parse is a broken file, not a release without associations. `synonyms` gives the synonyms of the loaded
    conditions; they are made exactly those in the same transaction (None: left as they are)."""
    with engine.begin() as conn:
        copy_into_temp(
            conn,
            "diseases_in",
            [("concept_id", "text"), ("name", "text"), ("mondo_id", "text"), ("omim_id", "text"), ("row_hash", "text")],
            ((d.concept_id, d.name, d.mondo_id or None, d.omim_id or None, _disease_hash(d)) for d in diseases),
        )
        copy_into_temp(
            conn,
            "associations_in",
            [
                ("hgnc_id", "text"),
                ("concept_id", "text"),
                ("source_name", "text"),
                ("entrez_id", "text"),
                ("gene_symbol", "text"),
                ("disease_name", "text"),
                ("source_id", "text"),
                ("disease_mim", "text"),
                ("relation", "text"),
                ("last_updated", "date"),
                ("row_hash", "text"),
            ],
            (
                (
                    a.hgnc_id,
                    a.concept_id,
                    a.source_name,
                    a.gene_entrez_id,
                    a.gene_symbol,
                    a.disease_name,
                    a.source_id,
                    a.disease_mim,
                    a.relation,
                    a.last_updated or None,
                    _association_hash(a),
                )
                for a in associations
            ),
        )
        disease_counts = _upsert_diseases(conn, dataset_version, len(diseases))
        gone = _delete_gone_associations(conn) if associations else 0
        association_counts = _upsert_associations(conn, dataset_version, len(associations), gone)
        gone_diseases = (
            conn.execute(
                text(
                    "DELETE FROM diseases d"
                    " WHERE NOT EXISTS (SELECT 1 FROM diseases_in i WHERE i.concept_id = d.concept_id)"
                )
            ).rowcount
            if associations
            else 0
        )
        synonym_counts = (
            _replace_synonyms(conn, synonyms.version, synonyms.for_conditions(diseases))
            if synonyms is not None
            else TableCounts()
        )
    return (
        TableCounts(disease_counts.inserted, disease_counts.updated, disease_counts.unchanged, gone_diseases),
        association_counts,
        synonym_counts,
    )


def _replace_synonyms(conn: Connection, version: str, synonyms: list[ConditionSynonym]) -> TableCounts:
    """condition_synonyms becomes exactly `rows` (of one vocabulary version): new pairs inserted, pairs whose MONDO
    term or vocabulary changed updated, pairs gone deleted; an unchanged pair is never rewritten."""
    copy_into_temp(
        conn,
        "synonyms_in",
        [("concept_id", "text"), ("synonym", "text"), ("mondo_id", "text")],
        ((s.concept_id, s.synonym, s.mondo_id) for s in synonyms),
    )
    deleted = conn.execute(
        text(
            "DELETE FROM condition_synonyms c WHERE NOT EXISTS (SELECT 1 FROM synonyms_in i"
            " WHERE (i.concept_id, i.synonym) = (c.concept_id, c.synonym))"
        )
    ).rowcount
    written = conn.execute(
        text("""
        WITH up AS (
            INSERT INTO condition_synonyms (concept_id, synonym, mondo_id, vocabulary_version)
            SELECT i.concept_id, i.synonym, i.mondo_id, :version FROM synonyms_in i
            JOIN diseases d ON d.concept_id = i.concept_id
            ON CONFLICT (concept_id, synonym) DO UPDATE SET
                mondo_id = EXCLUDED.mondo_id, vocabulary_version = EXCLUDED.vocabulary_version
            WHERE (condition_synonyms.mondo_id, condition_synonyms.vocabulary_version)
                <> (EXCLUDED.mondo_id, EXCLUDED.vocabulary_version)
            RETURNING (xmax = 0) AS inserted)
        SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
    """),
        {"version": version},
    ).one()
    inserted, updated = int(written[0]), int(written[1])
    return TableCounts(inserted, updated, len(synonyms) - inserted - updated, deleted)


def _upsert_diseases(conn: Connection, dataset_version: str, given: int) -> TableCounts:
    inserted, updated = conn.execute(
        text("""
        WITH up AS (
            INSERT INTO diseases (concept_id, name, mondo_id, omim_id, row_hash, dataset_version)
            SELECT concept_id, name, mondo_id, omim_id, row_hash, :dv FROM diseases_in
            ON CONFLICT (concept_id) DO UPDATE SET
                name = EXCLUDED.name, mondo_id = EXCLUDED.mondo_id, omim_id = EXCLUDED.omim_id,
                row_hash = EXCLUDED.row_hash, dataset_version = EXCLUDED.dataset_version, updated_at = now()
            WHERE diseases.row_hash <> EXCLUDED.row_hash
            RETURNING (xmax = 0) AS inserted)
        SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
    """),
        {"dv": dataset_version},
    ).one()
    return TableCounts(inserted, updated, given - inserted - updated)


def _delete_gone_associations(conn: Connection) -> int:
    return conn.execute(
        text("""
        DELETE FROM disease_associations a WHERE NOT EXISTS (
            SELECT 1 FROM associations_in i
            WHERE (i.hgnc_id, i.concept_id, i.source_name) = (a.hgnc_id, a.concept_id, a.source_name))
    """)
    ).rowcount


def _upsert_associations(conn: Connection, dataset_version: str, given: int, deleted: int) -> TableCounts:
    inserted, updated = conn.execute(
        text("""
        WITH up AS (
            INSERT INTO disease_associations (hgnc_id, concept_id, source_name, entrez_id, gene_symbol, disease_name,
                                              source_id, disease_mim, relation, last_updated, row_hash,
                                              dataset_version)
            SELECT hgnc_id, concept_id, source_name, entrez_id, gene_symbol, disease_name, source_id, disease_mim,
                   relation, last_updated, row_hash, :dv FROM associations_in
            ON CONFLICT (hgnc_id, concept_id, source_name) DO UPDATE SET
                entrez_id = EXCLUDED.entrez_id, gene_symbol = EXCLUDED.gene_symbol,
                disease_name = EXCLUDED.disease_name, source_id = EXCLUDED.source_id,
                disease_mim = EXCLUDED.disease_mim, relation = EXCLUDED.relation,
                last_updated = EXCLUDED.last_updated, row_hash = EXCLUDED.row_hash,
                dataset_version = EXCLUDED.dataset_version, updated_at = now()
            WHERE disease_associations.row_hash <> EXCLUDED.row_hash
            RETURNING (xmax = 0) AS inserted)
        SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up
    """),
        {"dv": dataset_version},
    ).one()
    return TableCounts(inserted, updated, given - inserted - updated, deleted)
