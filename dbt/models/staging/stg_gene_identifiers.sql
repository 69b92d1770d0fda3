select hgnc_id, symbol, entrez_id, uniprot_ids
from {{ source('flux', 'gene_identifiers') }}
