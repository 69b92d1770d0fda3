"""Two kept releases of one source (or two resolutions) read back and compared: what the release assets record and
what `flux releases diff A B` prints."""

from __future__ import annotations

from sqlalchemy import Engine, text

from dagster_project.releases import store
from dagster_project.releases.associations import AssociationDiff, diff_associations
from dagster_project.releases.diff import EdgeDiff, GeneDiff, GeneIndex, SourceDiff, diff_genes, diff_sources

Diff = SourceDiff | GeneDiff | EdgeDiff | AssociationDiff
GATE_KIND = {
    "reactome": "pathways",
    "kegg": "pathways",
    "hgnc": "genes",
    "clinvar": "associations",
    "resolution": "resolution",
}


def compare(engine: Engine, source: str, before: str, after: str) -> tuple[Diff, str | None]:
    """The diff of `before` → `after`, and the HGNC release that placed a pathway source's members."""
    if source == "resolution":
        return EdgeDiff(before, after, store.load_edges(engine, before), store.load_edges(engine, after)), None
    if source == "clinvar":
        return diff_associations(
            before, store.load_associations(engine, before), after, store.load_associations(engine, after)
        ), None
    if source == "hgnc":
        return diff_genes(before, store.load_genes(engine, before), after, store.load_genes(engine, after)), None
    gene_release = store.gene_release_for_diff(engine)
    index = GeneIndex(store.load_genes(engine, gene_release) if gene_release else [])
    diff = diff_sources(store.load_facts(engine, source, before), store.load_facts(engine, source, after), index)
    return diff, gene_release


class AmbiguousReleaseError(LookupError):
    """A release named by a part of its key that more than one kept release shares (or none does)."""


def resolve(engine: Engine, name: str, source: str | None = None) -> tuple[str, str]:
    """(source, release key) for a key, a part of one (`2019-03`, `#479d7055`), or `served` with a source."""
    with engine.connect() as conn:
        kept = [
            (r.source, r.release_key, r.served_at)
            for r in conn.execute(
                text(
                    "SELECT source, release_key, served_at FROM source_releases UNION ALL"
                    " SELECT 'resolution', release_key, served_at FROM resolution_releases"
                )
            )
        ]
    if source:
        kept = [k for k in kept if k[0] == source]
    if name == "served":
        served = sorted((k for k in kept if k[2] is not None), key=lambda k: k[2])
        if not source or not served:
            raise AmbiguousReleaseError("`served` needs --source naming a source with a served release")
        return served[-1][0], served[-1][1]
    exact = [k for k in kept if k[1] == name]
    matches = exact or [k for k in kept if name.lower() in k[1].lower()]
    if len(matches) != 1:
        found = ", ".join(f"{s}: {k}" for s, k, _ in matches) or "none"
        raise AmbiguousReleaseError(
            f"{name!r} names {len(matches)} kept releases ({found}); give more of the key "
            "or --source (`flux releases list` shows every kept release)"
        )
    return matches[0][0], matches[0][1]


def resolve_pair(engine: Engine, before: str, after: str, source: str | None = None) -> tuple[str, str, str]:
    """(source, before key, after key): without a source, the one of the two names that names one release says
    which source both belong to (`flux releases diff 2019 pathfindR`)."""
    if source is None:
        for name in (after, before):
            try:
                source = resolve(engine, name)[0]
                break
            except AmbiguousReleaseError:
                continue
    first, key_before = resolve(engine, before, source)
    _, key_after = resolve(engine, after, first)
    return first, key_before, key_after
