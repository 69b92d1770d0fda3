"""PubMed efetch XML and PubMedQA parsing, and the paper normalizer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagster_project.sources.model import PaperRecord
from dagster_project.sources.pubmed import normalize_papers, parse_pubmed_xml, parse_pubmedqa
from tests.support.pubmed_xml import HEADER, pubmed_article

# Read at import: the unit conftest clears FLUX_ variables before each test runs.
SNAPSHOT_DIR = Path(
    os.environ.get("FLUX_SNAPSHOT_DIR", str(Path(__file__).resolve().parents[2].parent / "shared" / "data"))
)
PUBMEDQA = SNAPSHOT_DIR / "pubmedqa" / "ori_pqal.json"

FIRST_ARTICLE = pubmed_article(
    "33658472",
    "<Year>2021</Year><Month>Mar</Month><Day>03</Day>",
    title="Loss of <i>TP53</i> drives &amp; sustains tumour growth.",
    doi="10.1038/s41467-021-21234-5",
    elocation_doi="10.1038/s41467-021-21000-0",
)
EFETCH_XML = (
    HEADER
    + "<PubmedArticleSet>\n"
    + FIRST_ARTICLE
    + """<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">10066345</PMID>
    <Article PubModel="Print">
      <Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate></JournalIssue>
        <Title>Journal of hypertension</Title></Journal>
      <ArticleTitle>Blood pressure in the elderly.</ArticleTitle>
      <ELocationID EIdType="doi" ValidYN="Y">10.1097/00004872-199812000-00001</ELocationID>
      <Abstract><AbstractText>An unstructured abstract.</AbstractText></Abstract>
    </Article>
  </MedlineCitation>
  <PubmedData><ArticleIdList><ArticleId IdType="pubmed">10066345</ArticleId></ArticleIdList></PubmedData>
</PubmedArticle>
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <Article><ArticleTitle>An article that lost its PMID.</ArticleTitle></Article>
  </MedlineCitation>
</PubmedArticle>
</PubmedArticleSet>
"""
)


def test_efetch_xml_parses_good_articles_and_quarantines_missing_pmid() -> None:
    result = parse_pubmed_xml(EFETCH_XML, "raw/pubmed/efetch-001.xml")
    assert [p.id for p in result.papers] == ["33658472", "10066345"]
    first, second = result.papers
    assert first.source == "pubmed"
    assert first.title == "Loss of TP53 drives & sustains tumour growth."
    assert first.abstract == (
        "BACKGROUND: TP53 is mutated in most cancers.\n\nMETHODS: We used CRISPR screens."
        "\n\nRESULTS: Loss increased growth (p < 0.01)."
    )
    assert first.year == 2021
    assert first.doi == "10.1038/s41467-021-21234-5"  # ArticleIdList wins over ELocationID
    assert first.topics == ("Tumor Suppressor Protein p53", "Neoplasms")
    assert first.extra["journal"] == "Nature communications"
    assert (second.abstract, second.year, second.doi, second.topics) == (
        "An unstructured abstract.",
        1998,
        "10.1097/00004872-199812000-00001",
        (),
    )
    [bad] = result.quarantined
    assert bad.reason == "missing PMID" and bad.raw_ref == "raw/pubmed/efetch-001.xml" and bad.source == "pubmed"
    assert "lost its PMID" in bad.payload


def test_article_without_title_or_abstract_is_quarantined() -> None:
    xml = (
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>123</PMID><Article><ArticleTitle/>"
        "</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    result = parse_pubmed_xml(xml, "ref")
    assert result.papers == [] and [(q.record_key, q.reason) for q in result.quarantined] == [
        ("123", "article has neither a title nor an abstract")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "<PubmedArticleSet><PubmedArticle>",  # truncated
        "<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>",  # NCBI error answer
        '<!DOCTYPE x [<!ENTITY a "aaaa">]><PubmedArticleSet>&a;</PubmedArticleSet>',  # entity declarations
    ],
)
def test_unusable_document_is_one_quarantined_record(text: str) -> None:
    result = parse_pubmed_xml(text, "raw/bad.xml")
    assert result.papers == []
    assert len(result.quarantined) == 1 and result.quarantined[0].record_key == "raw/bad.xml"


def test_pubmedqa_text_quarantines_bad_items() -> None:
    data = {
        "21645374": {
            "QUESTION": "Do mitochondria matter?",
            "CONTEXTS": ["Bg text.", "Result text."],
            "LABELS": ["BACKGROUND", "RESULTS"],
            "MESHES": ["Apoptosis"],
            "YEAR": None,
            "final_decision": "yes",
            "LONG_ANSWER": "They do.",
        },
        "PMC12345": {"QUESTION": "q", "CONTEXTS": ["c"], "LABELS": ["L"]},
        "16418930": {"QUESTION": "No contexts?", "LABELS": []},
    }
    result = parse_pubmedqa(json.dumps(data), "pubmedqa/test.json")
    [paper] = result.papers
    assert paper.id == "21645374" and paper.title == "Do mitochondria matter?" and paper.year is None
    assert paper.abstract == "BACKGROUND: Bg text.\n\nRESULTS: Result text."
    assert paper.topics == ("Apoptosis",)
    assert paper.extra == {
        "question": "Do mitochondria matter?",
        "final_decision": "yes",
        "long_answer": "They do.",
        "labels": ["BACKGROUND", "RESULTS"],
    }
    assert sorted(q.record_key for q in result.quarantined) == ["16418930", "PMC12345"]


@pytest.mark.shared_data
def test_full_pubmedqa_file() -> None:
    if not PUBMEDQA.exists():
        pytest.skip(f"{PUBMEDQA} not present")
    result = parse_pubmedqa(PUBMEDQA, str(PUBMEDQA))
    assert len(result.papers) == 1000 and result.quarantined == []
    assert all(p.id.isdigit() for p in result.papers)
    assert len({p.id for p in result.papers}) == 1000
    assert all(p.abstract and p.title for p in result.papers)


def test_normalizer_is_deterministic_and_unique_per_pmid() -> None:
    papers = parse_pubmed_xml(EFETCH_XML, "ref").papers
    duplicate = PaperRecord(id="33658472", source="pubmed", title="Other", abstract="Other")
    first = normalize_papers([*papers, duplicate])
    second = normalize_papers(parse_pubmed_xml(EFETCH_XML, "ref").papers)
    assert [d.external_id for d in first] == ["33658472", "10066345"]
    assert [d.content_hash for d in first] == [d.content_hash for d in second]
    doc = first[0]
    assert (doc.type, doc.source, doc.title, doc.content) == ("paper", "pubmed", papers[0].title, papers[0].abstract)
    assert doc.metadata["year"] == 2021 and doc.metadata["doi"] == "10.1038/s41467-021-21234-5"
    assert doc.metadata["mesh"] == ["Tumor Suppressor Protein p53", "Neoplasms"]
    assert doc.metadata["journal"] == "Nature communications"
    assert first[1].content_hash != doc.content_hash
