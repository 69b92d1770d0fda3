"""The served vector searches read the HNSW index at the served ef_search, for one query and for many (EXPLAIN on
the published chunk table): the planner cannot silently trade the index for a sequential scan."""

from __future__ import annotations

from psycopg import sql
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.evals.answer_eval import eval_pipeline
from dagster_project.index.tables import SCHEMA, as_sql, qualified
from retrieval.model.index_state import current_index


def _plan(conn, statement: str, params: dict) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(conn.execute(text("EXPLAIN " + statement), params).scalars())


def test_the_served_searches_read_the_hnsw_index_at_the_served_ef_search(demo_platform: FluxSettings) -> None:
    engine = engine_for(demo_platform.platform_database_url)
    index = current_index(engine)
    pg = eval_pipeline(demo_platform, index).retriever.postgres_retriever(index)
    with engine.connect() as conn:
        hnsw = conn.execute(
            text(
                "SELECT indexname FROM pg_indexes WHERE schemaname = :s AND tablename = :t AND"
                " indexdef LIKE '%USING hnsw%'"
            ),
            {"s": SCHEMA, "t": index.chunk_table},
        ).scalar_one()
        literal = conn.execute(
            text(as_sql(sql.SQL("SELECT embedding::text FROM {} LIMIT 1").format(qualified(index.chunk_table))))
        ).scalar_one()
        rows = conn.execute(
            text(as_sql(sql.SQL("SELECT count(*) FROM {}").format(qualified(index.chunk_table))))
        ).scalar_one()

    with engine.begin() as conn:
        pg.scan_settings(conn)
        assert conn.execute(text("SHOW hnsw.ef_search")).scalar_one() == str(demo_platform.index.hnsw_ef_search)
        one = _plan(conn, pg.queries.dense.text, {"v": literal, "k": pg.dense_k})
        many = _plan(conn, pg.queries.dense_many.text, {"vs": [literal] * 3, "k": pg.dense_k})
    for plan in (one, many):
        assert f"Index Scan using {hnsw}" in plan and "Seq Scan" not in plan.split("Index Scan")[0], plan

    # What the served settings prevent: on this table of a few hundred rows, and at a high ef_search on a large one,
    # the planner's own choice is a sequential scan and a sort.
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL hnsw.ef_search = 1000"))
        unguarded = _plan(conn, pg.queries.dense.text, {"v": literal, "k": pg.dense_k})
    assert f"Index Scan using {hnsw}" not in unguarded and "Seq Scan" in unguarded, (rows, unguarded)
