"""One PubMed efetch record in the shape NLM's PubMedArticle DTD gives it, with a structured abstract and MeSH
headings: the article the PubMed parser tests read and the E-utilities contract server serves for every PMID."""

from __future__ import annotations

from string import Template

HEADER = (
    '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN"'
    ' "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n'
)
ARTICLE = Template("""<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM" IndexingMethod="Automated">
    <PMID Version="1">$pmid</PMID>
    <Article PubModel="Print-Electronic">
      <Journal>
        <JournalIssue CitedMedium="Internet"><Volume>12</Volume><Issue>1</Issue>
          <PubDate>$pubdate</PubDate></JournalIssue>
        <Title>Nature communications</Title>
      </Journal>
      <ArticleTitle>$title</ArticleTitle>
      <ELocationID EIdType="doi" ValidYN="Y">$elocation_doi</ELocationID>
      <Abstract>
        <AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">TP53 is mutated in
          most cancers.</AbstractText>
        <AbstractText Label="METHODS" NlmCategory="METHODS">We used CRISPR screens.</AbstractText>
        <AbstractText Label="RESULTS" NlmCategory="RESULTS">Loss increased growth (p &lt; 0.01).</AbstractText>
      </Abstract>
      <PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType></PublicationTypeList>
    </Article>
    <MeshHeadingList>
      <MeshHeading><DescriptorName UI="D016159" MajorTopicYN="N">Tumor Suppressor Protein p53</DescriptorName>
        <QualifierName UI="Q000235" MajorTopicYN="Y">genetics</QualifierName></MeshHeading>
      <MeshHeading><DescriptorName UI="D009369" MajorTopicYN="Y">Neoplasms</DescriptorName></MeshHeading>
    </MeshHeadingList>
  </MedlineCitation>
  <PubmedData>
    <ArticleIdList>
      <ArticleId IdType="pubmed">$pmid</ArticleId>
      <ArticleId IdType="doi">$doi</ArticleId>
    </ArticleIdList>
  </PubmedData>
</PubmedArticle>
""")


def pubmed_article(pmid: str, pubdate: str, title: str, doi: str, elocation_doi: str | None = None) -> str:
    """One <PubmedArticle>; `pubdate` is the PubDate element's content, `doi` the ArticleIdList's."""
    return ARTICLE.substitute(pmid=pmid, pubdate=pubdate, title=title, doi=doi, elocation_doi=elocation_doi or doi)
