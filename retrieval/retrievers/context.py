"""What an LLM is shown of the evidence: each item in full, cut to 1,000 or cut to 200 characters by its relevance,
inside a total character budget (FLUX_CONTEXT_BUDGET_CHARS).

Relevance is an item's score min-max scaled among the items of its own kind: RRF scores of chunks (~0.03), graph
cosines (~0.7) and cross-encoder logits live on different scales, so only a comparison within a kind means
anything. The most relevant third prefers the full text, the middle third 1,000 characters, the rest a 200-character
snippet (still citable, unable to crowd out the best evidence). The budget then decides: items are placed best
first, each takes the largest tier up to its preference that leaves room for the snippets of every item after it;
when not even the snippets fit, the least relevant items are dropped. The prompt keeps the retrieval order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from retrieval.model.types import Evidence, Tier

CUTS: dict[Tier, int] = {"1000": 1000, "200": 200}
FULL_MIN = 2 / 3  # relevance at which an item may be shown in full
MID_MIN = 1 / 3  # relevance at which it may be shown up to 1,000 characters
ELLIPSIS = "…"


@dataclass(frozen=True)
class ContextItem:
    evidence: Evidence
    tier: Tier
    text: str  # what the model is shown of evidence.text ("" when dropped)


def header(evidence: Evidence) -> str:
    """The line that names an item in the prompt: its id is what the model must cite."""
    return f"[{evidence.id}] ({evidence.source or evidence.kind}) {evidence.title}".rstrip()


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, ending on a word boundary with an ellipsis when anything was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    if " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + ELLIPSIS


def relevance(evidence: list[Evidence]) -> list[float]:
    """Each item's score min-max scaled among the items of its kind; 1.0 where a kind's scores are all equal."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    for e in evidence:
        by_kind[e.kind].append(e.score)
    bounds = {kind: (min(scores), max(scores)) for kind, scores in by_kind.items()}
    out = []
    for e in evidence:
        low, high = bounds[e.kind]
        out.append(1.0 if high == low else (e.score - low) / (high - low))
    return out


def preferred(rel: float) -> Tier:
    return "full" if rel >= FULL_MIN else "1000" if rel >= MID_MIN else "200"


def _cost(evidence: Evidence, tier: Tier) -> int:
    shown = evidence.text if tier == "full" else cut(evidence.text, CUTS[tier])
    return len(header(evidence)) + 1 + len(shown)  # +1: the newline between header and text


def _included(order: list[int], evidence: list[Evidence], budget: int) -> list[int]:
    """The best-first prefix whose snippets fit the budget together: the rest is dropped."""
    kept, used = [], 0
    for i in order:
        used += _cost(evidence[i], "200")
        if used > budget:
            break
        kept.append(i)
    return kept


def tier_context(evidence: list[Evidence], budget: int) -> list[ContextItem]:
    """Every item with its tier and shown text, in the given order (dropped ones included, with no text)."""
    rel = relevance(evidence)
    order = sorted(range(len(evidence)), key=lambda i: (-rel[i], i))
    included = _included(order, evidence, budget)
    tiers: dict[int, Tier] = dict.fromkeys(range(len(evidence)), "dropped")
    reserve = sum(_cost(evidence[i], "200") for i in included)
    remaining = budget
    for i in included:
        reserve -= _cost(evidence[i], "200")  # what the items after this one still need at least
        choices: list[Tier] = ["full", "1000", "200"]
        for tier in choices[choices.index(preferred(rel[i])) :]:
            if _cost(evidence[i], tier) <= remaining - reserve or tier == "200":
                # A text no longer than its cut is shown whole: call it what it is.
                tiers[i] = "full" if _shown(evidence[i], tier) == evidence[i].text else tier
                remaining -= _cost(evidence[i], tier)
                break
    return [ContextItem(e, tiers[i], _shown(e, tiers[i])) for i, e in enumerate(evidence)]


def _shown(evidence: Evidence, tier: Tier) -> str:
    if tier == "dropped":
        return ""
    return evidence.text if tier == "full" else cut(evidence.text, CUTS[tier])


def tier_map(items: list[ContextItem]) -> dict[str, Tier]:
    """The answer's metadata: evidence id → tier."""
    return {item.evidence.id: item.tier for item in items}


def shown_context(evidence: list[Evidence], budget: int | None) -> tuple[dict[str, str], dict[str, Tier]]:
    """Each id given to a provider with this budget (None: no budget, all in full) with its text as shown, the
    title first (what a claim is checked against), and the tiers (empty without a budget)."""
    if budget is None:
        return {e.id: f"{e.title}. {e.text}" for e in evidence}, {}
    items = tier_context(evidence, budget)
    shown = {i.evidence.id: f"{i.evidence.title}. {i.text}" for i in items if i.tier != "dropped"}
    return shown, tier_map(items)
