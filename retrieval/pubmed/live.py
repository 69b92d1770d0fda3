"""Live PubMed for the question path: one set of tools per endpoint, contact and key in the process (so every
question shares NCBI's rate limit), the abstracts "what does the literature say about X" is answered from, and the
note an answer carries about the search behind it."""

from __future__ import annotations

import threading

from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings
from dagster_project.sources.model import PaperRecord
from dagster_project.sources.pubmed.client import EUTILS_BASE_URL, make_eutils_client
from dagster_project.sources.source import LiveIdentityError, live_contact_email
from retrieval.model.literature import LiteratureRequest, PubMedSearchData
from retrieval.pubmed.strategies import StrategyMemory
from retrieval.pubmed.tools import LiteratureTools

__all__ = ["LiveIdentityError", "memory_for", "pubmed_evidence", "searched_note", "tools_for"]
_TOOLS: dict[tuple[str, str, str], LiteratureTools] = {}
_TOOLS_LOCK = threading.Lock()


def tools_for(settings: FluxSettings) -> LiteratureTools:
    """The process's tools for the configured endpoint (raises LiveIdentityError for a placeholder contact)."""
    config = settings.sources
    key = config.ncbi_api_key.get_secret_value().strip() if config.ncbi_api_key else ""
    url = config.eutils_url or EUTILS_BASE_URL
    email = live_contact_email(settings)
    with _TOOLS_LOCK:
        if (url, email, key) not in _TOOLS:
            client = make_eutils_client(
                url,
                email=email,
                api_key=key or None,
                timeout=config.http_timeout,
                max_attempts=config.http_max_attempts,
            )
            _TOOLS[(url, email, key)] = LiteratureTools(client, source_mode="live")
        return _TOOLS[(url, email, key)]


def memory_for(engine: Engine | None) -> StrategyMemory | None:
    return StrategyMemory(engine) if engine is not None else None


def pubmed_evidence(
    settings: FluxSettings, engine: Engine | None, question: str, request: LiteratureRequest
) -> tuple[PubMedSearchData, list[PaperRecord], str]:
    """(how the search went, the abstracts read, why none were read — empty when some were)."""
    try:
        tools = tools_for(settings)
    except LiveIdentityError as exc:
        return PubMedSearchData(request=request, source_mode="live", live=True, error=str(exc)), [], str(exc)
    data, papers = tools.read_abstracts(question, request, memory_for(engine))
    if data.error:
        return data, [], f"PubMed could not be searched ({data.error})"
    if not papers:
        return data, [], "PubMed holds no abstract for this search"
    return data, papers, ""


def searched_note(data: PubMedSearchData) -> str:
    """The search behind an answer read from PubMed: the exact query, NCBI's translation and the count."""
    final = data.trail.final if data.trail else None
    if final is None or not final.translation:
        return ""
    refined = f" after {data.trail.refinements} refinement(s)" if data.trail and data.trail.refinements else ""
    count = f"{final.count:,} records" if final.count is not None else "no count"
    return (
        f"PubMed, searched live{refined}: Entrez query {final.term} — translated as {final.translation} "
        f"({count}); the abstracts of the {len(data.articles)} most relevant were read."
    )
