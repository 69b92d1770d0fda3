{{ config(materialized='table') }}
-- Per Reactome × KEGG pair sharing at least one protein: the intersection size and both set sizes, in SQL,
-- independently of the Python scoring (the mart compares the two).
with sizes as (
    select pathway_id, count(*) as set_size from {{ ref('int_pathway_uniprot_sets') }} group by pathway_id
),

shared as (
    select r.pathway_id as reactome_id, k.pathway_id as kegg_id, count(*) as shared
    from {{ ref('int_pathway_uniprot_sets') }} as r
    join {{ ref('int_pathway_uniprot_sets') }} as k on k.uniprot = r.uniprot
    where r.source = 'reactome' and k.source = 'kegg'
    group by r.pathway_id, k.pathway_id
)

select s.reactome_id, s.kegg_id, s.shared, rs.set_size as reactome_size, ks.set_size as kegg_size
from shared as s
join sizes as rs on rs.pathway_id = s.reactome_id
join sizes as ks on ks.pathway_id = s.kegg_id
