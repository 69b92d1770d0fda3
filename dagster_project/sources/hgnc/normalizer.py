"""HGNC rows are not documents: they feed the gene-identifier table. The normalizer only tidies them."""

from __future__ import annotations

from dagster_project.sources.model import GeneRecord


def normalize_genes(genes: list[GeneRecord]) -> list[GeneRecord]:
    """One row per HGNC id (the last wins if a file repeats one), withdrawn entries kept but flagged by status."""
    return list({g.hgnc_id: g for g in genes}.values())
