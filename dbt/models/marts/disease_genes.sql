{{ config(materialized='table') }}
-- One row per condition and HGNC gene: what ClinVar asserts about the pair, its asserting sources merged. A pair is
-- `associated` when any source lists the gene as associated, else `related`.
with links as (
    select * from {{ ref('stg_disease_associations') }}
)

select l.concept_id || '~' || l.hgnc_id as disease_gene_id,
       l.concept_id,
       d.name as disease_name,
       d.mondo_id,
       d.omim_id,
       l.hgnc_id,
       g.symbol,
       case when bool_or(l.relation = 'associated') then 'associated' else 'related' end as relation,
       count(*) as source_count,
       string_agg(coalesce(nullif(l.source_name, ''), 'unspecified'), ', ' order by l.source_name) as sources,
       max(l.last_updated) as last_updated
from links as l
join {{ ref('stg_diseases') }} as d on d.concept_id = l.concept_id
join {{ ref('stg_gene_identifiers') }} as g on g.hgnc_id = l.hgnc_id
group by l.concept_id, d.name, d.mondo_id, d.omim_id, l.hgnc_id, g.symbol
