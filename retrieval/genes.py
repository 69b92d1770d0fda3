"""Gene names in questions, from the gene-identifier table (HGNC symbols, aliases, previous symbols, names).

Used by the router (expand an acronym or symbol into what it stands for) and by the graph retriever (look named
genes up directly). Matching is case-insensitive but only for tokens written like identifiers (an upper-case
letter or a digit in them: TP53, p53, PI3K), never for common upper-cased words (CAT, SET, DNA), and never for
function words, which a capital at the start of a sentence would otherwise turn into aliases ("In" → CD44,
"Do" → ART4, "Of" → SPI1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import Engine

from dagster_project.core.vocabulary import COMMON_WORDS
from retrieval.index_state import PerIndex
from retrieval.terms import STOPWORDS

_TOKEN = re.compile(r"(?<![\w-])([A-Za-z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?![\w-])")


@dataclass(frozen=True)
class Gene:
    hgnc_id: str
    symbol: str
    name: str


@dataclass(frozen=True)
class GeneMention:
    token: str
    gene: Gene
    via: str  # symbol | alias | previous symbol


def _looks_like_identifier(token: str) -> bool:
    # An upper-case letter after the first, or a digit: TP53, p53, PI3K, Akt1 — not "Damage" or "In".
    return (len(token) >= 2 and any(ch.isupper() or ch.isdigit() for ch in token[1:])
            and not token.isdigit() and token.upper() not in COMMON_WORDS and token.lower() not in STOPWORDS)


class GeneLexicon:
    """Token (upper-cased) → gene. Approved symbols win over aliases, aliases over previous symbols."""

    def __init__(self, rows: list[tuple[str, str, str, list[str], list[str]]]) -> None:
        self._table: dict[str, tuple[Gene, str]] = {}
        genes = [(Gene(hgnc_id, symbol, name), aliases, previous) for hgnc_id, symbol, name, aliases, previous in rows]
        for gene, _aliases, previous in genes:
            for token in previous:
                self._table.setdefault(token.upper(), (gene, "previous symbol"))
        for gene, aliases, _previous in genes:
            for token in aliases:
                self._table[token.upper()] = (gene, "alias")
        for gene, _aliases, _previous in genes:
            self._table[gene.symbol.upper()] = (gene, "symbol")

    def __len__(self) -> int:
        return len(self._table)

    def lookup(self, token: str) -> GeneMention | None:
        hit = self._table.get(token.upper()) if _looks_like_identifier(token) else None
        return GeneMention(token, hit[0], hit[1]) if hit else None

    def find(self, question: str) -> list[GeneMention]:
        """Genes named in the question, in order, each gene once."""
        seen: dict[str, GeneMention] = {}
        for token in _TOKEN.findall(question):
            mention = self.lookup(token)
            if mention and mention.gene.hgnc_id not in seen:
                seen[mention.gene.hgnc_id] = mention
        return list(seen.values())


def _read_genes(engine: Engine) -> GeneLexicon:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT hgnc_id, symbol, name, aliases, previous_symbols FROM gene_identifiers"
                                 " WHERE status = 'Approved'")).all()
    return GeneLexicon([(r.hgnc_id, r.symbol, r.name, list(r.aliases), list(r.previous_symbols)) for r in rows])


_lexicons = PerIndex(_read_genes)


def load_lexicon(engine: Engine, version: str) -> GeneLexicon:
    """One lexicon per (database, index version) per process; a new index version reloads it."""
    return _lexicons.get(engine, version)
