select m.pathway_id, m.member_kind, m.id_space, m.member_id
from {{ source('flux', 'pathway_members') }} as m
join {{ source('flux', 'pathways') }} as p using (pathway_id)
where p.status = 'active'
