-- Resolved Reactome ↔ KEGG pairs (equivalent / part_of) with every score, names, and the SQL intersection size
-- beside the one the Python scoring used.
select
    m.reactome_id || '~' || m.kegg_id as pair_id,
    m.reactome_id,
    r.name as reactome_name,
    m.kegg_id,
    k.name as kegg_name,
    m.relation,
    m.direction,
    m.shared,
    o.shared as shared_in_sql,
    m.reactome_size,
    m.kegg_size,
    m.overlap,
    m.jaccard,
    m.p_value,
    m.q_value,
    m.name_similarity
from {{ ref('stg_pathway_mappings') }} as m
join {{ ref('stg_pathways') }} as r on r.pathway_id = m.reactome_id
join {{ ref('stg_pathways') }} as k on k.pathway_id = m.kegg_id
left join {{ ref('int_pathway_pair_overlaps') }} as o on o.reactome_id = m.reactome_id and o.kegg_id = m.kegg_id
where m.relation <> 'unrelated'
