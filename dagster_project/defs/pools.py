"""Dagster concurrency pools: steps in one pool run one at a time across all runs (dagster.yaml gives every pool
one slot, ops/instance.py)."""

RAY_POOL = "ray"  # model work on the Ray cluster, which is sized to the whole machine
GRAPH_WRITES_POOL = "neo4j_writes"  # MERGE batches into Neo4j: two writers would wait on each other's locks
