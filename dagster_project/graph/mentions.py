"""Gene mentions in paper text, with a dictionary built from HGNC symbols and aliases.

Gene symbols collide with words and abbreviations (CAT, SET, MET, IMPACT, PC, CD…). We only match tokens written
as symbols are written (upper case letters and digits, optionally with '-'), at least 3 characters, skip tokens
that are common English or lab words when upper-cased, and let an approved symbol win over an alias that is also
some other gene's symbol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dagster_project.core.vocabulary import COMMON_WORDS

_TOKEN = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)?)(?![\w-])")


def build_dictionary(genes: Iterable[tuple[str, str, list[str]]]) -> dict[str, str]:
    """(hgnc_id, symbol, aliases) → token → hgnc_id. Approved symbols are entered last so they win."""
    table: dict[str, str] = {}
    genes = list(genes)
    for hgnc_id, _symbol, aliases in genes:
        for alias in aliases:
            if _usable(alias):
                table.setdefault(alias, hgnc_id)
    for hgnc_id, symbol, _aliases in genes:
        if _usable(symbol):
            table[symbol] = hgnc_id
    return table


def _usable(token: str) -> bool:
    return len(token) >= 3 and token == token.upper() and token not in COMMON_WORDS and bool(_TOKEN.fullmatch(token))


def find_mentions(text: str, dictionary: dict[str, str]) -> list[str]:
    """HGNC ids of the genes mentioned in `text`, in order of first mention, each once."""
    found = (dictionary.get(token) for token in _TOKEN.findall(text))
    return list(dict.fromkeys(hit for hit in found if hit))
