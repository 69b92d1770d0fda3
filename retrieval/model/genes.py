"""Gene names in questions, from the gene-identifier table (HGNC symbols, aliases, previous symbols, names).

Used by the router (expand an acronym or symbol into what it stands for) and by the graph retriever (look named
genes up directly). Matching is case-insensitive but only for tokens written like identifiers (an upper-case
letter or a digit in them: TP53, p53, PI3K), never for common upper-cased words (CAT, SET, DNA), and never for
function words, which a capital at the start of a sentence would otherwise turn into aliases ("In" → CD44,
"Do" → ART4, "Of" → SPI1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.core.vocabulary import COMMON_WORDS
from retrieval.model.index_state import PerIndex
from retrieval.model.terms import QUESTION_STOPWORDS

# Greek letters belong to a name ("PKB" + beta, "TNF" + alpha): a token does not end before them.
_GREEK = "\u0391-\u03a9\u03b1-\u03c9"
_TOKEN = re.compile(rf"(?<![\w-])([A-Za-z0-9][A-Za-z0-9{_GREEK}]*(?:-[A-Za-z0-9{_GREEK}]+)*)(?![\w-])")
# Gene identifiers written anywhere in a question: HGNC:11998, ENSG00000141510, P04637 / Q9Y6K9 (UniProt), and an
# Entrez id only right after the word "Entrez" / "NCBI Gene" (a bare number is not a gene).
HGNC_ID = re.compile(r"(?<![\w:])HGNC:\d{1,6}(?!\w)", re.I)
ENSEMBL_ID = re.compile(r"(?<!\w)ENSG\d{11}(?:\.\d+)?(?!\w)", re.I)
UNIPROT_ID = re.compile(r"(?<![\w-])([OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{2}[0-9]){1,2})(?![\w-])")
# Approved symbols that are also words a lower-case question uses in their plain sense.
_PLAIN_WORDS = frozenset(
    {
        "cat",
        "set",
        "met",
        "max",
        "rest",
        "clock",
        "impact",
        "spring",
        "host",
        "pigs",
        "cap",
        "mars",
        "wasp",
        "gas",
        "car",
        "tank",
        "ski",
        "best",
        "star",
        "sign",
        "tap",
        "nov",
        "bad",
        "mice",
        "cell",
        "gene",
        "not",
        "per",
        "can",
        "top",
        "key",
        "arc",
        "pole",
        "dot",
        "pan",
    }
)
ENTREZ_ID = re.compile(r"\b(?:entrez|ncbi gene)(?: gene)?(?: id)?[\s:#]+(\d{1,9})\b", re.I)


@dataclass(frozen=True)
class Gene:
    hgnc_id: str
    symbol: str
    name: str
    entrez_id: str | None = None
    uniprot_ids: tuple[str, ...] = ()
    ensembl_id: str = ""
    locus_type: str = ""
    location: str = ""
    aliases: tuple[str, ...] = field(default=(), compare=False)
    previous_symbols: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class GeneMention:
    token: str
    gene: Gene
    via: str  # symbol | alias | previous symbol | HGNC id | Ensembl id | UniProt accession | Entrez id
    candidates: tuple[Gene, ...] = ()  # an alias or previous symbol several genes carry: all of them


def _looks_like_identifier(token: str) -> bool:
    # An upper-case letter after the first, or a digit: TP53, p53, PI3K, Akt1 — not "Damage" or "In".
    return (
        len(token) >= 2
        and any(ch.isupper() or ch.isdigit() for ch in token[1:])
        and not token.isdigit()
        and token.upper() not in COMMON_WORDS
        and token.lower() not in QUESTION_STOPWORDS
    )


class GeneLexicon:
    """Token (upper-cased) → gene. Approved symbols win over aliases, aliases over previous symbols; an alias that
    several genes carry keeps all of them as candidates. Identifiers (HGNC, Ensembl, UniProt, Entrez) are looked
    up exactly.

    A row is (hgnc_id, symbol, name, aliases, previous_symbols), optionally followed by a dict of identifiers
    (entrez_id, uniprot_ids, ensembl_id, locus_type, location)."""

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self._table: dict[str, tuple[Gene, str]] = {}
        self._shared: dict[str, list[Gene]] = {}
        self._ids: dict[str, Gene] = {}
        genes = [_gene(row) for row in rows]
        for gene in genes:
            for token in gene.previous_symbols:
                self._table.setdefault(token.upper(), (gene, "previous symbol"))
                self._shared.setdefault(token.upper(), []).append(gene)
        for gene in genes:
            for token in gene.aliases:
                self._table[token.upper()] = (gene, "alias")
                self._shared.setdefault(token.upper(), []).append(gene)
        for gene in genes:
            self._table[gene.symbol.upper()] = (gene, "symbol")
            for key in (
                gene.hgnc_id,
                gene.ensembl_id,
                *gene.uniprot_ids,
                f"ENTREZ:{gene.entrez_id}" if gene.entrez_id else "",
            ):
                if key:
                    self._ids[key.upper()] = gene

    def __len__(self) -> int:
        return len(self._table)

    def lookup(self, token: str) -> GeneMention | None:
        return self._mention(token) if _looks_like_identifier(token) else None

    def lookup_loose(self, token: str) -> GeneMention | None:
        """Any case, any shape ("smac", "N-ras"): only where the question is known to name a gene (a gene-fact
        question), never to find genes in free text."""
        if token.lower() in QUESTION_STOPWORDS or token.upper() in COMMON_WORDS or len(token) < 2:
            return None
        return self._mention(token)

    def _mention(self, token: str) -> GeneMention | None:
        """The gene the token names, with every candidate when it is an alias or previous symbol several carry."""
        hit = self._table.get(token.upper())
        if not hit:
            return None
        gene, via = hit
        shared = self._shared.get(token.upper(), [])
        candidates = tuple(dict.fromkeys([gene, *shared])) if via != "symbol" and len(set(shared)) > 1 else ()
        return GeneMention(token, gene, via, candidates)

    def by_id(self, identifier: str) -> Gene | None:
        """The gene with this HGNC, Ensembl (version suffix ignored), UniProt or `ENTREZ:<n>` identifier."""
        return self._ids.get(
            identifier.upper().split(".")[0] if identifier.upper().startswith("ENSG") else identifier.upper()
        )

    def identifiers_in(self, question: str) -> list[tuple[str, str]]:
        """(kind, identifier) for every gene identifier written in the question, in order, known or not."""
        found = [(m.start(), "HGNC id", m.group(0).upper()) for m in HGNC_ID.finditer(question)]
        found += [(m.start(), "Ensembl id", m.group(0).upper().split(".")[0]) for m in ENSEMBL_ID.finditer(question)]
        found += [(m.start(), "UniProt accession", m.group(1)) for m in UNIPROT_ID.finditer(question)]
        found += [(m.start(), "Entrez id", f"ENTREZ:{m.group(1)}") for m in ENTREZ_ID.finditer(question)]
        return [(kind, ident) for _, kind, ident in sorted(found)]

    def find(self, question: str) -> list[GeneMention]:
        """Genes named in the question (identifiers first, then symbols and aliases), in order, each gene once.
        In a question written all in lower case, an approved symbol of three or more characters counts too
        ("which pathways contain egfr"), but not an alias: lower-case aliases are too often plain words."""
        seen: dict[str, GeneMention] = {}
        for kind, identifier in self.identifiers_in(question):
            gene = self.by_id(identifier)
            if gene is not None and gene.hgnc_id not in seen:
                seen[gene.hgnc_id] = GeneMention(identifier.removeprefix("ENTREZ:"), gene, kind)
        lower_case, upper_case = question == question.lower(), question == question.upper()
        for token in _TOKEN.findall(question):
            mention = (
                self.lookup(token)
                or (self._lower_case_symbol(token) if lower_case else None)
                or (None if upper_case else self._capitalised_symbol(token))
            )
            if mention and mention.gene.hgnc_id not in seen:
                seen[mention.gene.hgnc_id] = mention
        return list(seen.values())

    def holds_symbol(self, token: str) -> bool:
        """Whether the token is an approved symbol, alias or previous symbol the table holds, whatever the word."""
        return token.upper() in self._table

    def _capitalised_symbol(self, token: str) -> GeneMention | None:
        """An approved symbol that is also an English word, written in capitals in a question that is not:
        "Is BAD in apoptosis?", "Which pathways contain KIT?" ("bad", "kit" and "Bad" stay words)."""
        hit = self._table.get(token)
        if hit is None or hit[1] != "symbol" or len(token) < 3 or not token.isupper() or token not in COMMON_WORDS:
            return None
        return GeneMention(token, hit[0], "symbol")

    def _lower_case_symbol(self, token: str) -> GeneMention | None:
        hit = self._table.get(token.upper())
        if (
            hit is None
            or hit[1] != "symbol"
            or len(token) < 3
            or token in QUESTION_STOPWORDS
            or token.upper() in COMMON_WORDS
            or token in _PLAIN_WORDS
        ):
            return None
        return GeneMention(token, hit[0], "symbol")


def _gene(row: tuple[Any, ...]) -> Gene:
    hgnc_id, symbol, name, aliases, previous = row[:5]
    ids: dict[str, Any] = row[5] if len(row) > 5 else {}
    return Gene(
        hgnc_id,
        symbol,
        name,
        entrez_id=ids.get("entrez_id"),
        uniprot_ids=tuple(ids.get("uniprot_ids") or ()),
        ensembl_id=ids.get("ensembl_id") or "",
        locus_type=ids.get("locus_type") or "",
        location=ids.get("location") or "",
        aliases=tuple(aliases),
        previous_symbols=tuple(previous),
    )


def _read_genes(engine: Engine) -> GeneLexicon:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT hgnc_id, symbol, name, aliases, previous_symbols, entrez_id, uniprot_ids,"
                " ensembl_gene_id, locus_type, location FROM gene_identifiers"
                " WHERE status = 'Approved'"
            )
        ).all()
    return GeneLexicon(
        [
            (
                r.hgnc_id,
                r.symbol,
                r.name,
                list(r.aliases),
                list(r.previous_symbols),
                {
                    "entrez_id": r.entrez_id,
                    "uniprot_ids": list(r.uniprot_ids),
                    "ensembl_id": r.ensembl_gene_id,
                    "locus_type": r.locus_type,
                    "location": r.location,
                },
            )
            for r in rows
        ]
    )


_lexicons = PerIndex(_read_genes)


def load_lexicon(engine: Engine, version: str) -> GeneLexicon:
    """One lexicon per (database, index version) per process; a new index version reloads it."""
    return _lexicons.get(engine, version)
