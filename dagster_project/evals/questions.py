"""Question sets for the scorecards.

Retrieval: PubMedQA questions whose own abstract is the relevant document (snapshot mode, where the PubMed
documents are the PubMedQA abstracts); when the corpus holds none of them (the demo), the titles of the corpus's
papers stand in, each with its own paper as the relevant document. Answers: a sample of those plus the relational
questions in relational_questions.json. Resolution: well-known Reactome↔KEGG counterparts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.core.settings import FluxSettings

RELATIONAL_FILE = Path(__file__).with_name("relational_questions.json")

# Well-known counterparts from public knowledge (not from any curated mapping file).
KNOWN_COUNTERPARTS: list[tuple[str, str]] = [
    ("R-HSA-70171", "hsa00010"),  # glycolysis
    ("R-HSA-70263", "hsa00010"),  # gluconeogenesis
    ("R-HSA-71403", "hsa00020"),  # citric acid cycle
    ("R-HSA-71336", "hsa00030"),  # pentose phosphate pathway
    ("R-HSA-1640170", "hsa04110"),  # cell cycle
    ("R-HSA-109581", "hsa04210"),  # apoptosis
    ("R-HSA-5683057", "hsa04010"),  # MAPK
    ("R-HSA-1257604", "hsa04151"),  # PI3K-AKT
    ("R-HSA-74752", "hsa04910"),  # insulin signalling
    ("R-HSA-3700989", "hsa04115"),  # p53
    ("R-HSA-69306", "hsa03030"),  # DNA replication
    ("R-HSA-5358508", "hsa03430"),  # mismatch repair
    ("R-HSA-73884", "hsa03410"),  # base excision repair
    ("R-HSA-5696398", "hsa03420"),  # nucleotide excision repair
    ("R-HSA-77289", "hsa00071"),  # fatty acid beta-oxidation / degradation
    ("R-HSA-5358351", "hsa04340"),  # hedgehog
    ("R-HSA-195721", "hsa04310"),  # WNT
    ("R-HSA-2142753", "hsa00590"),  # arachidonic acid
    ("R-HSA-196071", "hsa00140"),  # steroid hormones
    ("R-HSA-2559583", "hsa04218"),  # cellular senescence
]


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    relevant_doc: str = ""  # `{source}_{external_id}` for retrieval questions
    expected: tuple[str, ...] = ()  # ids an answer's cited evidence should contain
    kind: str = "pubmedqa"
    decision: str = ""  # PubMedQA final_decision (yes / no / maybe)
    gene_list_of: tuple[str, ...] = ()  # pathways whose (shared) genes the answer must list
    extra: dict[str, str] = field(default_factory=dict)


def _pubmedqa_items(settings: FluxSettings, engine: Engine) -> list[tuple[str, dict]]:
    """PubMedQA items whose abstract is an active document of the corpus, in file order."""
    path = settings.sources.snapshot_dir / "pubmedqa" / "ori_pqal.json"
    if not path.exists():
        return []
    items = json.loads(path.read_text())
    with engine.connect() as conn:
        present = set(
            conn.execute(
                text("SELECT external_id FROM documents WHERE source = 'pubmed' AND status = 'active'")
            ).scalars()
        )
    return [(pmid, item) for pmid, item in items.items() if pmid in present]


def pubmedqa_questions(settings: FluxSettings, engine: Engine, limit: int) -> list[EvalQuestion]:
    """PubMedQA questions (their documents' titles in snapshot mode) with their own abstract as the target."""
    return [
        EvalQuestion(
            id=f"pubmedqa-{pmid}",
            question=item["QUESTION"],
            relevant_doc=f"pubmed_{pmid}",
            decision=item.get("final_decision", ""),
        )
        for pmid, item in _pubmedqa_items(settings, engine)
    ][:limit]


def study_finding_questions(settings: FluxSettings, engine: Engine, limit: int) -> dict[str, list[EvalQuestion]]:
    """Two tasks whose queries are not in the indexed text: the study's conclusion (PubMedQA LONG_ANSWER, kept
    in metadata, never indexed) and its MeSH headings (metadata too) → that study's document."""
    conclusion, mesh = [], []
    for pmid, item in _pubmedqa_items(settings, engine):
        target = f"pubmed_{pmid}"
        if str(item.get("LONG_ANSWER") or "").strip():
            conclusion.append(
                EvalQuestion(
                    id=f"conclusion-{pmid}",
                    question=item["LONG_ANSWER"].strip(),
                    relevant_doc=target,
                    kind="conclusion_to_study",
                )
            )
        headings = [m for m in item.get("MESHES") or [] if isinstance(m, str)]
        if len(headings) >= 3:
            mesh.append(
                EvalQuestion(id=f"mesh-{pmid}", question="; ".join(headings), relevant_doc=target, kind="mesh_to_study")
            )
    return {"conclusion_to_study": conclusion[:limit], "mesh_to_study": mesh[:limit]}


def title_questions(engine: Engine, limit: int) -> list[EvalQuestion]:
    """The corpus's paper titles as questions (the demo has no PubMedQA abstracts)."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT source, external_id, title FROM documents WHERE type = 'paper'"
                " AND status = 'active' AND length(title) > 20 ORDER BY source, external_id"
                " LIMIT :n"
            ),
            {"n": limit},
        ).all()
    return [
        EvalQuestion(
            id=f"title-{r.source}-{r.external_id}",
            question=r.title,
            relevant_doc=f"{r.source}_{r.external_id}",
            kind="title",
        )
        for r in rows
    ]


def retrieval_questions(settings: FluxSettings, engine: Engine, limit: int) -> list[EvalQuestion]:
    return pubmedqa_questions(settings, engine, limit) or title_questions(engine, limit)


def keyword_questions(engine: Engine, limit: int) -> list[EvalQuestion]:
    """A work's OpenAlex keywords (metadata, not indexed), joined, → that work: how an analyst searches by terms."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT external_id, metadata->'keywords' AS keywords FROM documents WHERE source = 'openalex'"
                " AND status = 'active' AND jsonb_array_length(COALESCE(metadata->'keywords', '[]'::jsonb)) >= 2"
                " ORDER BY external_id LIMIT :n"
            ),
            {"n": limit},
        ).all()
    return [
        EvalQuestion(
            id=f"keywords-{r.external_id}",
            question="; ".join(r.keywords),
            relevant_doc=f"openalex_{r.external_id}",
            kind="keywords_to_paper",
        )
        for r in rows
    ]


TITLE_LOOKUP_LIMIT = 200  # reported, never gated: a few hundred say all it can


def retrieval_tasks(settings: FluxSettings, engine: Engine, limit: int) -> dict[str, list[EvalQuestion]]:
    """The retrieval scorecard's tasks. Gated: conclusion → study and MeSH → study (snapshot), keywords → paper
    (demo and snapshot). Reported only: `title_lookup`, whose queries are the documents' own titles."""
    tasks = study_finding_questions(settings, engine, limit) | {"keywords_to_paper": keyword_questions(engine, limit)}
    tasks = {k: v for k, v in tasks.items() if v}
    titles = pubmedqa_questions(settings, engine, TITLE_LOOKUP_LIMIT) or title_questions(engine, limit)
    return tasks | {
        "title_lookup": [EvalQuestion(q.id, q.question, q.relevant_doc, kind="title_lookup") for q in titles]
    }


def relational_questions() -> list[EvalQuestion]:
    data = json.loads(RELATIONAL_FILE.read_text())
    return [
        EvalQuestion(
            id=q["id"],
            question=q["question"],
            expected=tuple(q["expected"]),
            kind=q["kind"],
            gene_list_of=tuple(q.get("gene_list_of", ())),
        )
        for q in data["questions"]
    ]
