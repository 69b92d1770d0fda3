"""Local servers that hold each source provider to its documented contract (see contract_server.py)."""
