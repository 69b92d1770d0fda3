"""The core: code that never imports dagster, so the query service and the retrieval layer can use it without
pulling in the orchestrator. retrieval/ and serving/ may import it; nothing here may import dagster, the assets or
the resources (tests/unit/test_http_client.py checks this in a fresh interpreter)."""
