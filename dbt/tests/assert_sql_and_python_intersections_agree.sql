-- The Python scoring (sparse matrices) and SQL must agree on every resolved pair's shared-protein count.
select pair_id, shared, shared_in_sql
from {{ ref('pathway_equivalences') }}
where shared_in_sql is distinct from shared
