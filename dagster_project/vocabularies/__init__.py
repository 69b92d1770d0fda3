"""Maintained vocabularies Flux grounds names against (read offline from pinned files)."""
