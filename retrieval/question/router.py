"""Router: decide how to turn a question into retrieval queries (docs/answers.md, step 2).

Rules, in order: over 30 words, more than one `?`, or clauses joined by "and" / "or" / "as well as" → decompose;
under 8 words or an unexplained acronym (PI3K, p53) → expand; over 25 words or error text → compress; else
direct. With an LLM provider configured the provider writes the sub-questions / expansion / compression, and the
rules' output is the fallback. The original question is always retrieved for as well.
"""

from __future__ import annotations

import re

from dagster_project.core.vocabulary import COMMON_WORDS
from retrieval.model.genes import GeneLexicon
from retrieval.model.terms import content_words, words
from retrieval.model.types import LLMProvider, RoutePlan, Strategy

DECOMPOSE_WORDS = 30
EXPAND_WORDS = 8
COMPRESS_WORDS = 25
MAX_QUERIES = 4
# A clause boundary: the conjunction is followed by a new question (a wh-word or an auxiliary) or preceded by
# punctuation. "BRCA1 and BRCA2 in DNA repair" is one clause; "…glycolysis, and which genes…" is two.
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:[,;]\s*(?:and|or|as well as)\s+|\s+(?:and|or|as well as)\s+(?=(?:what|which|how|why|where|when|who|"
    r"whose|is|are|does|do|did|can|could|should|would|will|has|have)\b))",
    re.IGNORECASE,
)
_ERROR_TEXT = re.compile(
    r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception)\b:|^\s+at [\w.$]+\(|"
    r"\bFile \"[^\"]+\", line \d+|\berror:\s",
    re.MULTILINE,
)
_ACRONYM = re.compile(r"(?<![\w-])([A-Za-z]*[A-Z][A-Za-z]*\d[\w-]*|[A-Z]{2,}[\w-]*|[a-z]\d{2,}[\w-]*)(?![\w-])")


def _conjunction_clauses(question: str) -> list[str]:
    return [p.strip(" ,;") for p in _CLAUSE_SPLIT.split(question)]


def split_clauses(question: str) -> list[str]:
    parts = _conjunction_clauses(question)
    questions = [q.strip() for p in parts for q in re.split(r"(?<=\?)\s+", p)]
    return [q if q.endswith("?") else q + "?" for q in questions if len(words(q)) >= 2]


def unexplained_acronyms(question: str) -> list[str]:
    """Acronyms not followed by a parenthesised explanation: 'PI3K' counts, 'PI3K (phosphoinositide 3-kinase)'
    does not."""
    found = []
    for match in _ACRONYM.finditer(question):
        # DNA, RNA, ATP are acronyms everyone reads; they need no expansion.
        if not re.match(r"\s*\(", question[match.end() :]) and match.group(1).upper() not in COMMON_WORDS:
            found.append(match.group(1))
    return list(dict.fromkeys(found))


def choose_strategy(question: str) -> tuple[Strategy, str]:
    n_words = len(words(question))
    # Only conjunctions count here: one question followed by pasted text (an error, context) is not two clauses.
    clauses = [c for c in _conjunction_clauses(question) if len(words(c)) >= 2]
    if n_words > DECOMPOSE_WORDS:
        return "decompose", f"{n_words} words (> {DECOMPOSE_WORDS})"
    if question.count("?") > 1:
        return "decompose", f"{question.count('?')} question marks"
    if len(clauses) > 1:
        return "decompose", f"{len(clauses)} clauses joined by and/or"
    if n_words < EXPAND_WORDS:
        return "expand", f"{n_words} words (< {EXPAND_WORDS})"
    acronyms = unexplained_acronyms(question)
    if acronyms:
        return "expand", f"unexplained acronyms: {', '.join(acronyms)}"
    if n_words > COMPRESS_WORDS:
        return "compress", f"{n_words} words (> {COMPRESS_WORDS})"
    if _ERROR_TEXT.search(question):
        return "compress", "contains error text"
    return "direct", "plain question"


def _expand(question: str, lexicon: GeneLexicon) -> tuple[str, dict[str, str]]:
    expansions: dict[str, str] = {}
    for token in unexplained_acronyms(question) + [t for t in words(question) if t not in expansions]:
        mention = lexicon.lookup(token)
        if mention and token not in expansions:
            gene = mention.gene
            expansions[token] = gene.name if gene.symbol.upper() == token.upper() else f"{gene.symbol} {gene.name}"
    if not expansions:
        return question, {}
    return f"{question} ({'; '.join(f'{k}: {v}' for k, v in expansions.items())})", expansions


def _compress(question: str) -> str:
    lines = [ln for ln in question.splitlines() if not re.match(r"\s+(at |File \")", ln)]
    kept = content_words(" ".join(lines))
    return " ".join(list(dict.fromkeys(kept))[:16])


def route(question: str, lexicon: GeneLexicon, provider: LLMProvider | None = None) -> RoutePlan:
    strategy, reason = choose_strategy(question)
    if strategy == "direct":
        return RoutePlan(strategy=strategy, reason=reason, queries=[question])
    rewritten = provider.rewrite(question, strategy) if provider is not None else None
    expansions: dict[str, str] = {}
    if strategy == "decompose":
        parts = split_clauses(question)
        rules = (
            parts
            if len(parts) > 1
            else [_compress(p) for p in re.split(r"(?<=[.;?])\s+", question) if len(words(p)) >= 3]
        )
    elif strategy == "expand":
        expanded, expansions = _expand(question, lexicon)
        rules = [expanded] if expanded != question else []
    else:
        rules = [_compress(question)]
    extra = [q for q in (rewritten or rules) if q.strip() and q.strip() != question]
    queries = list(dict.fromkeys([question, *extra]))[: MAX_QUERIES + 1]
    return RoutePlan(
        strategy=strategy,
        reason=reason,
        queries=queries,
        expansions=expansions,
        rewritten_by="llm" if rewritten else "rules",
    )
