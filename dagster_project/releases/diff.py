"""What changed between two releases of a source, and between two resolutions. Pure: facts in, changes out.

Gene members are compared as HGNC genes, whatever space each release names them in (UniProt, Entrez, HGNC
symbols): a symbol HGNC has since renamed is followed through its previous symbols to the same gene, so a rename is
counted as a rename, never as one gene lost and another gained. A member HGNC cannot place is compared by its id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dagster_project.sources.gmt import normalized_name
from dagster_project.sources.ids import uniprot_base

Member = tuple[str, str]  # (id space, member id)


@dataclass(frozen=True)
class Gene:
    hgnc_id: str
    symbol: str
    previous_symbols: tuple[str, ...] = ()
    entrez_id: str | None = None
    uniprot_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReleaseFacts:
    """One release of a pathway source: each pathway's name (None where the release names none) and gene members."""

    source: str
    key: str
    names: Mapping[str, str | None]
    members: Mapping[str, frozenset[Member]]


class GeneIndex:
    """Places a member in HGNC: an approved symbol, an Entrez id or a UniProt accession names its gene; a symbol
    that is only a previous symbol (of exactly one gene) names that gene and counts as renamed."""

    def __init__(self, genes: Iterable[Gene]) -> None:
        self.symbol_of: dict[str, str] = {}
        self._by_symbol: dict[str, str] = {}
        self._by_entrez: dict[str, str] = {}
        by_previous: dict[str, set[str]] = {}
        by_uniprot: dict[str, set[str]] = {}
        for gene in genes:
            self.symbol_of[gene.hgnc_id] = gene.symbol
            self._by_symbol[gene.symbol] = gene.hgnc_id
            if gene.entrez_id:
                self._by_entrez[gene.entrez_id] = gene.hgnc_id
            for old in gene.previous_symbols:
                by_previous.setdefault(old, set()).add(gene.hgnc_id)
            for accession in gene.uniprot_ids:
                by_uniprot.setdefault(accession, set()).add(gene.hgnc_id)
        # A previous symbol or an accession shared by two genes names neither.
        self._by_previous = {
            old: next(iter(ids)) for old, ids in by_previous.items() if len(ids) == 1 and old not in self._by_symbol
        }
        self._by_uniprot = {acc: next(iter(ids)) for acc, ids in by_uniprot.items() if len(ids) == 1}

    def place(self, member: Member) -> tuple[str, bool]:
        """(comparison key, whether a renamed symbol was followed to reach it)."""
        space, member_id = member
        if space == "hgnc_symbol":
            if member_id in self._by_symbol:
                return self._by_symbol[member_id], False
            if member_id in self._by_previous:
                return self._by_previous[member_id], True
        elif space == "entrez" and member_id in self._by_entrez:
            return self._by_entrez[member_id], False
        elif space == "uniprot" and uniprot_base(member_id) in self._by_uniprot:
            return self._by_uniprot[uniprot_base(member_id)], False
        return f"{space}:{member_id}", False

    def label(self, key: str) -> str:
        """A readable name for a comparison key: the gene's approved symbol, else the id as the release gave it."""
        return self.symbol_of.get(key, key.partition(":")[2] or key)


@dataclass(frozen=True)
class PathwayChange:
    pathway_id: str
    name: str
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    genes_renamed: int


@dataclass
class SourceDiff:
    source: str
    from_key: str
    to_key: str
    pathways_before: int
    pathways_after: int
    added: dict[str, str | None] = field(default_factory=dict)
    removed: dict[str, str | None] = field(default_factory=dict)
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)
    named_kept: int = 0  # pathways in both releases with a name in both: what a rename share is taken of
    members_before: int = 0  # gene memberships of the kept pathways in the earlier release
    changed: list[PathwayChange] = field(default_factory=list)

    @property
    def members_gained(self) -> int:
        return sum(len(c.gained) for c in self.changed)

    @property
    def members_lost(self) -> int:
        return sum(len(c.lost) for c in self.changed)

    @property
    def genes_renamed(self) -> int:
        return sum(c.genes_renamed for c in self.changed)

    def figures(self) -> dict[str, int]:
        return {
            "pathways_before": self.pathways_before,
            "pathways_after": self.pathways_after,
            "pathways_added": len(self.added),
            "pathways_removed": len(self.removed),
            "pathways_renamed": len(self.renamed),
            "named_kept": self.named_kept,
            "pathways_with_member_changes": sum(1 for c in self.changed if c.gained or c.lost),
            "members_before": self.members_before,
            "members_gained": self.members_gained,
            "members_lost": self.members_lost,
            "genes_renamed_in_members": self.genes_renamed,
        }

    def largest(self, n: int = 10) -> list[PathwayChange]:
        """The n pathways whose membership changed most (gained + lost), ties by id."""
        moved = [c for c in self.changed if c.gained or c.lost]
        return sorted(moved, key=lambda c: (-(len(c.gained) + len(c.lost)), c.pathway_id))[:n]

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(change kind, subject id, detail) per change, for the release_changes table."""
        rows: list[tuple[str, str, dict[str, Any]]] = []
        rows += [("pathway_added", pid, {"name": name}) for pid, name in sorted(self.added.items())]
        rows += [("pathway_removed", pid, {"name": name}) for pid, name in sorted(self.removed.items())]
        rows += [
            ("pathway_renamed", pid, {"before": old, "after": new}) for pid, (old, new) in sorted(self.renamed.items())
        ]
        rows += [
            (
                "members_changed",
                c.pathway_id,
                {"name": c.name, "gained": list(c.gained), "lost": list(c.lost), "genes_renamed": c.genes_renamed},
            )
            for c in sorted(self.changed, key=lambda c: c.pathway_id)
            if c.gained or c.lost or c.genes_renamed
        ]
        return rows


def _placed(members: frozenset[Member], genes: GeneIndex) -> tuple[set[str], int]:
    keys, renamed = set(), 0
    for member in members:
        key, followed = genes.place(member)
        keys.add(key)
        renamed += followed
    return keys, renamed


def diff_sources(before: ReleaseFacts, after: ReleaseFacts, genes: GeneIndex) -> SourceDiff:
    diff = SourceDiff(after.source, before.key, after.key, len(before.names), len(after.names))
    diff.added = {pid: after.names[pid] for pid in after.names.keys() - before.names.keys()}
    diff.removed = {pid: before.names[pid] for pid in before.names.keys() - after.names.keys()}
    for pid in sorted(before.names.keys() & after.names.keys()):
        old, new = before.names[pid], after.names[pid]
        if old and new:
            diff.named_kept += 1
            if normalized_name(old) != normalized_name(new):
                diff.renamed[pid] = (old, new)
        was, renamed_before = _placed(before.members.get(pid, frozenset()), genes)
        now, renamed_after = _placed(after.members.get(pid, frozenset()), genes)
        diff.members_before += len(was)
        gained, lost = sorted(now - was), sorted(was - now)
        renamed = renamed_before + renamed_after
        if gained or lost or renamed:
            diff.changed.append(
                PathwayChange(
                    pid,
                    new or old or pid,
                    tuple(genes.label(k) for k in gained),
                    tuple(genes.label(k) for k in lost),
                    renamed,
                )
            )
    return diff


@dataclass
class GeneDiff:
    from_key: str
    to_key: str
    genes_before: int
    added: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)

    def figures(self) -> dict[str, int]:
        return {
            "genes_before": self.genes_before,
            "genes_added": len(self.added),
            "genes_removed": len(self.removed),
            "genes_renamed": len(self.renamed),
        }

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        return (
            [("gene_added", g, {"symbol": s}) for g, s in sorted(self.added.items())]
            + [("gene_removed", g, {"symbol": s}) for g, s in sorted(self.removed.items())]
            + [("gene_renamed", g, {"before": old, "after": new}) for g, (old, new) in sorted(self.renamed.items())]
        )


def diff_genes(from_key: str, before: Iterable[Gene], to_key: str, after: Iterable[Gene]) -> GeneDiff:
    was = {g.hgnc_id: g.symbol for g in before}
    now = {g.hgnc_id: g.symbol for g in after}
    return GeneDiff(
        from_key,
        to_key,
        len(was),
        added={g: now[g] for g in now.keys() - was.keys()},
        removed={g: was[g] for g in was.keys() - now.keys()},
        renamed={g: (was[g], now[g]) for g in was.keys() & now.keys() if was[g] != now[g]},
    )


Edge = tuple[str, str]  # (reactome id, kegg id)


@dataclass
class EdgeDiff:
    from_key: str
    to_key: str
    before: Mapping[Edge, str]
    after: Mapping[Edge, str]

    @property
    def appeared(self) -> dict[Edge, str]:
        return {e: r for e, r in self.after.items() if e not in self.before}

    @property
    def disappeared(self) -> dict[Edge, str]:
        return {e: r for e, r in self.before.items() if e not in self.after}

    @property
    def reclassified(self) -> dict[Edge, tuple[str, str]]:
        return {e: (r, self.after[e]) for e, r in self.before.items() if e in self.after and self.after[e] != r}

    def figures(self) -> dict[str, int]:
        equivalences = [e for e, r in self.before.items() if r == "equivalent"]
        return {
            "edges_before": len(self.before),
            "edges_after": len(self.after),
            "edges_appeared": len(self.appeared),
            "edges_disappeared": len(self.disappeared),
            "edges_reclassified": len(self.reclassified),
            "equivalences_before": len(equivalences),
            "equivalences_lost": sum(1 for e in equivalences if self.after.get(e) != "equivalent"),
        }

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        def subject(edge: Edge) -> str:
            return f"{edge[0]}~{edge[1]}"

        return (
            [("edge_appeared", subject(e), {"relation": r}) for e, r in sorted(self.appeared.items())]
            + [("edge_disappeared", subject(e), {"relation": r}) for e, r in sorted(self.disappeared.items())]
            + [
                ("edge_reclassified", subject(e), {"before": old, "after": new})
                for e, (old, new) in sorted(self.reclassified.items())
            ]
        )
