select pathway_id, source, name, species, category, subcategory
from {{ source('flux', 'pathways') }}
where status = 'active'
