-- One row per scorecard run and metric (metrics are a JSON object in eval_runs).
select r.id as eval_run_id,
       r.scorecard,
       r.dagster_run_id,
       r.index_version,
       r.accepted,
       r.created_at,
       m.key as metric,
       m.value::double precision as value
from {{ source('flux', 'eval_runs') }} r
cross join lateral jsonb_each_text(r.metrics) as m (key, value)
