-- One row per change between two kept releases, with the member counts a members_changed row carries.
select c.source,
       c.from_key,
       c.to_key,
       c.change_kind,
       c.subject_id,
       coalesce(c.detail ->> 'name', c.detail ->> 'after', c.detail ->> 'symbol', '') as subject_name,
       coalesce(jsonb_array_length(c.detail -> 'gained'), 0) as members_gained,
       coalesce(jsonb_array_length(c.detail -> 'lost'), 0) as members_lost,
       coalesce((c.detail ->> 'genes_renamed')::integer, 0) as genes_renamed,
       c.computed_at
from {{ source('flux', 'release_changes') }} as c
