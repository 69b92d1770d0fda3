"""Parsers for PubMed efetch XML and the PubMedQA snapshot into `PaperRecord`s.

Bad records are quarantined with a reason rather than dropped or allowed to fail the whole batch, so one broken
article never costs the other 199 in an efetch answer.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dagster_project.sources.model import PaperRecord, ParseResult, Quarantined

SOURCE = "pubmed"
PAYLOAD_LIMIT = 2000  # keep quarantine rows small; the raw file is kept under raw_ref anyway
_YEAR_RE = re.compile(r"\b(1[89]\d{2}|20\d{2})\b")
_SPACE_RE = re.compile(r"\s+")


def _text(element: ET.Element | None) -> str:
    """All text inside an element, nested markup (<i>, <sup>, MathML) included, whitespace collapsed."""
    return _SPACE_RE.sub(" ", "".join(element.itertext())).strip() if element is not None else ""


def _quarantine(key: str, raw_ref: str, reason: str, payload: str = "") -> Quarantined:
    return Quarantined(SOURCE, key, raw_ref, reason, payload[:PAYLOAD_LIMIT])


def _labelled(paragraphs: Iterable[tuple[str, str]]) -> str:
    """Structured abstracts keep their section labels, as 'LABEL: text' paragraphs."""
    parts = [f"{label}: {text}" if label else text for label, text in paragraphs if text]
    return "\n\n".join(parts)


def _year(value: object) -> int | None:
    match = _YEAR_RE.search(str(value)) if value is not None else None
    return int(match.group(1)) if match else None


# --- efetch XML ---------------------------------------------------------------------------------------------------


def _article_year(article: ET.Element) -> int | None:
    pub_date = article.find("MedlineCitation/Article/Journal/JournalIssue/PubDate")
    if pub_date is not None:
        year = _year(pub_date.findtext("Year")) or _year(pub_date.findtext("MedlineDate"))
        if year:
            return year
    return _year(article.findtext("MedlineCitation/Article/ArticleDate/Year"))


def _article_doi(article: ET.Element) -> str | None:
    for node in article.findall("PubmedData/ArticleIdList/ArticleId"):
        if node.get("IdType") == "doi" and _text(node):
            return _text(node)
    for node in article.findall("MedlineCitation/Article/ELocationID"):
        if node.get("EIdType") == "doi" and node.get("ValidYN", "Y") == "Y" and _text(node):
            return _text(node)
    return None


def _paper_from_article(article: ET.Element, citation: ET.Element, pmid: str) -> PaperRecord:
    abstract = _labelled(
        (node.get("Label", "").strip(), _text(node)) for node in citation.findall("Article/Abstract/AbstractText")
    )
    mesh = tuple(_text(node) for node in citation.findall("MeshHeadingList/MeshHeading/DescriptorName"))
    extra: dict[str, Any] = {
        "journal": _text(citation.find("Article/Journal/Title")),
        "publication_types": [_text(node) for node in citation.findall("Article/PublicationTypeList/PublicationType")],
    }
    return PaperRecord(
        id=pmid,
        source=SOURCE,
        title=_text(citation.find("Article/ArticleTitle")),
        abstract=abstract,
        year=_article_year(article),
        doi=_article_doi(article),
        topics=tuple(name for name in mesh if name),
        extra=extra,
    )


def _xml(element: ET.Element) -> str:
    return ET.tostring(element, encoding="unicode")


def _parse_article(article: ET.Element, index: int, raw_ref: str, seen: set[str]) -> PaperRecord | Quarantined:
    # The article is written back to text only for quarantine: doing it for every kept one was half the parse time.
    citation = article.find("MedlineCitation")
    pmid = _text(citation.find("PMID")) if citation is not None else ""
    if citation is None or not (pmid.isascii() and pmid.isdigit()):
        reason = "missing PMID" if not pmid else f"non-numeric PMID {pmid!r}"
        return _quarantine(f"article[{index}]", raw_ref, reason, _xml(article))
    if pmid in seen:
        return _quarantine(pmid, raw_ref, "duplicate PMID in the same document", _xml(article))
    paper = _paper_from_article(article, citation, pmid)
    if not paper.title and not paper.abstract:
        return _quarantine(pmid, raw_ref, "article has neither a title nor an abstract", _xml(article))
    seen.add(pmid)
    return paper


def parse_pubmed_xml(xml_text: str, raw_ref: str) -> ParseResult:
    """Parse an efetch PubmedArticleSet; a document that is not one is quarantined whole."""
    result = ParseResult()
    if "<!ENTITY" in xml_text:  # entity declarations are never in NCBI output and are the XML-bomb vector
        result.quarantined.append(_quarantine(raw_ref, raw_ref, "document declares XML entities", xml_text))
        return result
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        result.quarantined.append(_quarantine(raw_ref, raw_ref, f"unparseable XML: {exc}", xml_text))
        return result
    if root.tag != "PubmedArticleSet":
        result.quarantined.append(
            _quarantine(raw_ref, raw_ref, f"expected PubmedArticleSet, got <{root.tag}>", xml_text)
        )
        return result
    seen: set[str] = set()
    for index, child in enumerate(root):
        if child.tag == "PubmedArticle":
            parsed = _parse_article(child, index, raw_ref, seen)
        elif child.tag == "PubmedBookArticle":
            parsed = _quarantine(f"article[{index}]", raw_ref, "book articles are not supported", _xml(child))
        else:
            continue  # DeleteCitation and other set-level bookkeeping are not records
        (result.papers if isinstance(parsed, PaperRecord) else result.quarantined).append(parsed)
    return result


# --- PubMedQA -----------------------------------------------------------------------------------------------------


def _load_pubmedqa(path_or_text: str | Path) -> Any:
    if isinstance(path_or_text, Path) or not path_or_text.lstrip().startswith("{"):
        return json.loads(Path(path_or_text).read_text(encoding="utf-8"))
    return json.loads(path_or_text)


def _string_list(value: object) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return value


def _pubmedqa_item(pmid: str, item: object, raw_ref: str) -> PaperRecord | Quarantined:
    payload = json.dumps(item, ensure_ascii=False, default=str)
    if not (pmid.isascii() and pmid.isdigit()):
        return _quarantine(pmid, raw_ref, f"non-numeric PMID {pmid!r}", payload)
    if not isinstance(item, dict):
        return _quarantine(pmid, raw_ref, "item is not an object", payload)
    contexts = _string_list(item.get("CONTEXTS"))
    if not contexts or not any(text.strip() for text in contexts):
        return _quarantine(pmid, raw_ref, "missing CONTEXTS", payload)
    labels = _string_list(item.get("LABELS")) or []
    question = str(item.get("QUESTION") or "").strip()
    abstract = _labelled(
        (labels[i].strip() if i < len(labels) else "", _SPACE_RE.sub(" ", text).strip())
        for i, text in enumerate(contexts)
    )
    extra = {
        "question": question,
        "final_decision": item.get("final_decision"),
        "long_answer": item.get("LONG_ANSWER"),
        "labels": labels,
    }
    return PaperRecord(
        id=pmid,
        source=SOURCE,
        title=question,
        abstract=abstract,
        year=_year(item.get("YEAR")),
        topics=tuple(_string_list(item.get("MESHES")) or ()),
        extra=extra,
    )


def parse_pubmedqa(path_or_text: str | Path, raw_ref: str) -> ParseResult:
    """Parse PubMedQA (ori_pqal.json: PMID -> {QUESTION, CONTEXTS, LABELS, MESHES, YEAR, ...}).

    A `Path`, or a string that does not start with '{', is read as a file; otherwise it is the JSON text.
    """
    result = ParseResult()
    try:
        data = _load_pubmedqa(path_or_text)
    except (OSError, ValueError) as exc:
        result.quarantined.append(_quarantine(raw_ref, raw_ref, f"unreadable PubMedQA file: {exc}"))
        return result
    if not isinstance(data, dict):
        result.quarantined.append(_quarantine(raw_ref, raw_ref, "PubMedQA file is not a PMID -> item object"))
        return result
    for pmid, item in data.items():
        parsed = _pubmedqa_item(str(pmid).strip(), item, raw_ref)
        (result.papers if isinstance(parsed, PaperRecord) else result.quarantined).append(parsed)
    return result
