{{ config(materialized='table') }}
-- Per source and pair of releases: how many changes of each kind, and the gene memberships they moved — what a
-- refresh changed, in one table a person can read or chart. Releases come in the order they were first kept.
with changes as (
    select * from {{ ref('stg_release_changes') }}
),

releases as (
    select source, release_key, first_loaded_at from {{ source('flux', 'source_releases') }}
)

select c.source || ':' || c.from_key || ' -> ' || c.to_key || ':' || c.change_kind as churn_id,
       c.source,
       c.from_key,
       c.to_key,
       c.change_kind,
       count(*) as changes,
       sum(c.members_gained) as members_gained,
       sum(c.members_lost) as members_lost,
       sum(c.genes_renamed) as genes_renamed,
       max(c.computed_at) as computed_at,
       max(r.first_loaded_at) as to_first_kept_at
from changes as c
left join releases as r on r.source = c.source and r.release_key = c.to_key
group by c.source, c.from_key, c.to_key, c.change_kind
