"""Questions about a gene itself, answered from the HGNC table: its official symbol (from an alias, a previous
symbol or an id), its identifiers, whether it is protein-coding, and where it lies (chromosome band).

Only phrasings that ask for one of those facts count ("official symbol", "convert … to a symbol", "Ensembl id",
"protein-coding", "which chromosome"); "What does TP53 do?" stays a literature question.
"""

from __future__ import annotations

import re
from typing import Literal

from dagster_project.core.text import words
from retrieval.model.genes import Gene, GeneLexicon, GeneMention
from retrieval.model.terms import QUESTION_STOPWORDS

Fact = Literal["symbol", "ids", "locus_type", "location", "summary"]

# Checked in this order: the first that matches names the fact.
_FACTS: tuple[tuple[Fact, re.Pattern[str]], ...] = (
    (
        "location",
        re.compile(
            r"\bchromosom\w*|\bcytoband|\bcytogenetic|\bchromosomal\b|\bwhere\b.*\b(located|lie|lies|"
            r"sit|sits|map|maps)\b|\b(genomic )?location\b|\bmap position\b|\bwhich arm\b|"
            r"\blocated\b|\bwhere in the genome\b",
            re.I,
        ),
    ),
    (
        "locus_type",
        re.compile(
            r"\bprotein[- ]coding\b|\blocus (type|group)\b|\bnon-?coding\b|\bpseudogenes?\b|"
            r"\b(kind|type|sort|class) of (gene|locus)\b|\b(lnc|nc|mi|sn|sno)?RNA gene\b|"
            r"\b(code|codes|coding|encode|encodes) (for )?(a )?protein\b",
            re.I,
        ),
    ),
    (
        "summary",
        re.compile(
            r"\bfull name\b|\bstands? for\b|\bapproved name\b|\bofficial name\b|\bgene name\b|"
            r"\bwhat does .+ stand for\b",
            re.I,
        ),
    ),
    (
        "symbol",
        re.compile(
            r"\bsymbols?\b|\bwhat gene is\b|\bwhich gene (is|has)\b|\b(also|otherwise) (called|known)\b|"
            r"\baliase?s?\b|\bsynonyms?\b|\bother names?\b|\bold name\b|\bprevious(ly)? (symbol|name|"
            r"called|named)\b|\brenamed\b|\bcurrent name\b",
            re.I,
        ),
    ),
    (
        "ids",
        re.compile(
            r"\b(uniprot|entrez|ncbi|ensembl|hgnc)\b|\bidentifiers?\b|\bids?\b|\baccessions?\b|"
            r"\bcross-?references?\b",
            re.I,
        ),
    ),
)
# "What does X convert to", "convert ENSG… to a gene symbol": the target of a conversion is a symbol.
_CONVERT = re.compile(r"\b(convert|map|translate|turn|resolve)\b.*\b(symbols?|names?|genes?)\b", re.I)
# Written like a gene (upper-case letters and digits) but in no row of the table: an unknown gene.
_GENE_SHAPED = re.compile(r"(?<![\w:-])([A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]+)?)(?![\w:-])")
_NOT_GENES = frozenset(
    {
        "HGNC",
        "KEGG",
        "NCBI",
        "ENSEMBL",
        "UNIPROT",
        "ENTREZ",
        "ID",
        "IDS",
        "DNA",
        "RNA",
        "TCA",
        "I",
        "A",
        "OK",
        "REACTOME",
        "HSA",
        "MAPK",
        "ATP",
        "GTP",
        "NADH",
        "NAD",
        "II",
        "III",
        "IV",
    }
)


def asked_fact(question: str) -> Fact | None:
    if _CONVERT.search(question):
        return "symbol"
    return next((fact for fact, pattern in _FACTS if pattern.search(question)), None)


def candidates(mention: GeneMention) -> tuple[Gene, ...]:
    """The gene named, or every gene that carries the alias / previous symbol it was named by."""
    return mention.candidates or (mention.gene,)


# Words a gene-fact question is made of, on top of the question stop words (terms.QUESTION_STOPWORDS, which already
# hold "what", "which", "tell", "name", "type", "known" ...); what is left names the gene.
_FACT_TEXT = """
official approved current hgnc symbol symbols gene genes names full stand stands chromosome chromosomal
cytoband cytogenetic location located lie lies map maps genome genomic protein coding non-coding noncoding pseudogene
locus sort class identifiers identifier ids id accession accessions uniprot entrez ncbi ensembl convert
translate called alias aliases synonym synonyms previous previously renamed code codes encode encodes arm band
"""
_NOT_THE_GENE = QUESTION_STOPWORDS | frozenset(_FACT_TEXT.split())
# Only '-' joins a word here: "TP53/MDM2" names two genes and "Reactome's" ends at the apostrophe.
_GENE_WORD_JOINERS = "-"


def named_gene(question: str, lexicon: GeneLexicon) -> tuple[GeneMention | None, str]:
    """In a gene-fact question, the gene named however it is written ("smac", "N-ras"), or the word that names
    an unknown one ("zqx61"); (None, "") when no word is left to name a gene."""
    left = [w for w in words(question, _GENE_WORD_JOINERS) if w.lower() not in _NOT_THE_GENE]
    for word in left:
        mention = lexicon.lookup_loose(word)
        if mention is not None:
            return mention, word
    unknown = [w for w in left if any(ch.isdigit() for ch in w) or w.isupper()]
    return None, unknown[0] if unknown else ""


def unknown_gene_tokens(question: str, lexicon: GeneLexicon) -> list[str]:
    """Gene-shaped words the table does not hold (FOOBAR1), for an honest 'not found'."""
    return [
        t
        for t in dict.fromkeys(_GENE_SHAPED.findall(question))
        if t.upper() not in _NOT_GENES and lexicon.lookup(t) is None and not t.isdigit() and not lexicon.holds_symbol(t)
    ]
