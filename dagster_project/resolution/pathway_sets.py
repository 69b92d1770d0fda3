"""Both sides' member genes in one identifier space (UniProt), read from the structured source tables."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import Engine, text

from dagster_project.resolution.scores import PathwaySets

# Gene members in UniProt: Reactome's are UniProt already (HGNC symbols in its 2019 gene sets); KEGG's are Entrez
# numbers and, in the snapshot, HGNC symbols. Entrez numbers and symbols go through the HGNC table, plus KEGG's own
# conv/uniprot/hsa pairs where a live or demo pull brought them. One query for either source (:source).
MEMBER_UNIPROT = """
SELECT m.pathway_id, m.member_id AS uniprot
FROM pathway_members m JOIN pathways p USING (pathway_id)
WHERE p.source = :source AND p.status = 'active' AND m.id_space = 'uniprot'
UNION
SELECT m.pathway_id, u.uniprot
FROM pathway_members m JOIN pathways p USING (pathway_id)
JOIN gene_identifiers g ON g.entrez_id = m.member_id
CROSS JOIN LATERAL unnest(g.uniprot_ids) AS u (uniprot)
WHERE p.source = :source AND p.status = 'active' AND m.id_space = 'entrez'
UNION
SELECT m.pathway_id, u.uniprot
FROM pathway_members m JOIN pathways p USING (pathway_id)
JOIN gene_identifiers g ON g.symbol = m.member_id
CROSS JOIN LATERAL unnest(g.uniprot_ids) AS u (uniprot)
WHERE p.source = :source AND p.status = 'active' AND m.id_space = 'hgnc_symbol'
UNION
SELECT m.pathway_id, k.uniprot_id
FROM pathway_members m JOIN pathways p USING (pathway_id)
JOIN kegg_gene_uniprot k ON k.entrez_id = m.member_id
WHERE p.source = :source AND p.status = 'active' AND m.id_space = 'entrez'
"""


def load_sets(engine: Engine, source: str) -> PathwaySets:
    members: dict[str, set[str]] = defaultdict(set)
    with engine.connect() as conn:
        for pathway_id, uniprot in conn.execute(text(MEMBER_UNIPROT), {"source": source}):
            members[pathway_id].add(uniprot)
        names = dict(
            conn.execute(
                text("SELECT pathway_id, name FROM pathways WHERE source = :s AND status = 'active'"), {"s": source}
            ).all()
        )
    ids = sorted(pid for pid in members if pid in names)
    return PathwaySets(ids, [names[i] for i in ids], [frozenset(members[i]) for i in ids])


def load_reactome_parents(engine: Engine) -> dict[str, list[str]]:
    """SUBPATHWAY_OF edges as child → parents, for the active Reactome pathways."""
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT pathway_id, parents FROM pathways WHERE source = 'reactome' AND status = 'active'")
        ).all()
    return {pathway_id: list(parents or []) for pathway_id, parents in rows}


def active_pathway_ids(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(text("SELECT pathway_id FROM pathways WHERE status = 'active'")).scalars())
