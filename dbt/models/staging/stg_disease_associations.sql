-- ClinVar's gene-condition associations as loaded: one row per (HGNC gene, MedGen concept, asserting source).
select a.hgnc_id || '~' || a.concept_id || '~' || a.source_name as association_id,
       a.hgnc_id,
       a.concept_id,
       a.source_name,
       a.source_id,
       a.entrez_id,
       a.gene_symbol,
       a.disease_name,
       a.disease_mim,
       a.relation,
       a.last_updated,
       a.dataset_version
from {{ source('flux', 'disease_associations') }} as a
