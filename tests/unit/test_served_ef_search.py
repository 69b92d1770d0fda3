"""The served HNSW ef_search: the configured value on small tables, growing with the table beyond 100k vectors."""

from __future__ import annotations

from retrieval.retrievers.pg_retriever import served_ef_search


def test_small_tables_use_the_configured_value_and_large_ones_scale_up_to_pgvectors_cap() -> None:
    assert served_ef_search(7_000, 100) == served_ef_search(100_000, 100) == 100
    assert served_ef_search(1_000_000, 100) == 350  # recall@10 0.98 on the 1M sweep
    grown = [served_ef_search(n, 100) for n in (200_000, 1_000_000, 10_000_000)]
    assert grown == sorted(grown) and grown[0] > 100
    assert served_ef_search(10**12, 100) == 1000  # hnsw.ef_search's maximum
    assert served_ef_search(1_000_000, 40) == 140  # proportional to what an operator configured
