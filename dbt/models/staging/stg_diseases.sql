-- ClinVar's conditions, one row per MedGen concept.
select d.concept_id,
       d.name,
       d.mondo_id,
       d.omim_id
from {{ source('flux', 'diseases') }} as d
