-- Each scorecard metric over time: its previous value, the change, and the accepted baseline it is gated against.
with metrics as (
    select * from {{ ref('stg_eval_metrics') }}
),

baselines as (
    select distinct on (scorecard, metric) scorecard, metric, value as baseline_value, eval_run_id as baseline_run_id
    from metrics
    where accepted
    order by scorecard, metric, created_at desc
)

select m.scorecard || ':' || m.eval_run_id || ':' || m.metric as metric_run_id,
       m.scorecard,
       m.metric,
       m.eval_run_id,
       m.created_at,
       m.index_version,
       m.value,
       lag(m.value) over (partition by m.scorecard, m.metric order by m.created_at, m.eval_run_id) as previous_value,
       m.value - lag(m.value) over (partition by m.scorecard, m.metric order by m.created_at, m.eval_run_id)
           as change,
       b.baseline_value,
       m.value - b.baseline_value as delta_vs_baseline,
       b.baseline_run_id
from metrics m
left join baselines b using (scorecard, metric)
