"""All six providers' contract servers at once, serving the recorded bodies under `../shared/data` and the demo
files, for tests that pull (or probe) every source live."""

from __future__ import annotations

from pathlib import Path

from tests.support.contract_server import ContractServer
from tests.support.contracts.clinvar import ClinvarContractServer
from tests.support.contracts.eutils import EUtilsContractServer
from tests.support.contracts.hgnc import HgncContractServer
from tests.support.contracts.kegg import KeggContractServer
from tests.support.contracts.openalex import OpenAlexContractServer
from tests.support.contracts.reactome import ReactomeContractServer


def provider_servers(
    snapshot: Path, demo: Path, *, openalex_key: str, pubmed_records: int
) -> dict[str, ContractServer]:
    """One server per source, not started; KEGG keeps its documented 3 requests/s, OpenAlex accepts only
    `openalex_key`, and E-utilities matches `pubmed_records` records to its query."""
    return {
        "reactome": ReactomeContractServer(
            snapshot / "fixtures" / "reactome_downloads", demo / "reactome" / "summations.json"
        ),
        "kegg": KeggContractServer(snapshot / "fixtures", demo / "kegg" / "conv_uniprot_hsa.txt", rate_limit=3),
        "hgnc": HgncContractServer(demo / "hgnc" / "hgnc_complete_set.txt"),
        "openalex": OpenAlexContractServer(
            sorted((snapshot / "openalex" / "openalexPro_snapshots").glob("*.json")), keys={openalex_key: 1.0}
        ),
        "pubmed": EUtilsContractServer(pubmed_records),
        "clinvar": ClinvarContractServer(demo / "clinvar" / "gene_condition_source_id.txt"),
    }
