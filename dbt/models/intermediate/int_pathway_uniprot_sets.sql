-- Both sources' gene members in one identifier space: UniProt accessions.
-- Reactome members are UniProt already (HGNC symbols in its 2019 gene sets); KEGG Entrez numbers and either
-- source's HGNC symbols go through the HGNC table, plus KEGG's own conv/uniprot/hsa pairs where a pull had them.
with members as (
    select m.pathway_id, p.source, m.id_space, m.member_id
    from {{ ref('stg_pathway_members') }} as m
    join {{ ref('stg_pathways') }} as p using (pathway_id)
    where m.member_kind = 'gene'
),

hgnc_uniprot as (
    select g.symbol, g.entrez_id, u.uniprot
    from {{ ref('stg_gene_identifiers') }} as g
    cross join lateral unnest(g.uniprot_ids) as u (uniprot)
),

reactome as (
    select pathway_id, source, member_id as uniprot
    from members where source = 'reactome' and id_space = 'uniprot'
),

kegg_by_entrez as (
    select m.pathway_id, m.source, h.uniprot
    from members as m join hgnc_uniprot as h on m.id_space = 'entrez' and h.entrez_id = m.member_id
    where m.source = 'kegg'
),

by_symbol as (
    select m.pathway_id, m.source, h.uniprot
    from members as m join hgnc_uniprot as h on m.id_space = 'hgnc_symbol' and h.symbol = m.member_id
),

kegg_by_conv as (
    select m.pathway_id, m.source, k.uniprot_id as uniprot
    from members as m join {{ source('flux', 'kegg_gene_uniprot') }} as k
        on m.id_space = 'entrez' and k.entrez_id = m.member_id
    where m.source = 'kegg'
)

select pathway_id, source, uniprot from reactome
union
select pathway_id, source, uniprot from kegg_by_entrez
union
select pathway_id, source, uniprot from by_symbol
union
select pathway_id, source, uniprot from kegg_by_conv
