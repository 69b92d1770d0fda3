"""PubMed: NCBI E-utilities client, efetch XML / PubMedQA parsers and the paper normalizer."""

from dagster_project.sources.pubmed.client import (
    EUTILS_BASE_URL,
    MAX_IDS,
    MAX_RETMAX,
    VALID_DBS,
    EUtilsClient,
    make_eutils_client,
)
from dagster_project.sources.pubmed.normalizer import normalize_paper, normalize_papers
from dagster_project.sources.pubmed.parser import parse_pubmed_xml, parse_pubmedqa

__all__ = [
    "EUTILS_BASE_URL",
    "MAX_IDS",
    "MAX_RETMAX",
    "VALID_DBS",
    "EUtilsClient",
    "make_eutils_client",
    "normalize_paper",
    "normalize_papers",
    "parse_pubmed_xml",
    "parse_pubmedqa",
]
