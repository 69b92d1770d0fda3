select reactome_id, kegg_id, reactome_size, kegg_size, shared, overlap, jaccard, p_value, q_value,
       name_similarity, relation, direction
from {{ source('flux', 'pathway_mappings') }}
