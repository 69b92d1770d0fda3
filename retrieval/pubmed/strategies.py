"""Strategy memory: search strategies that passed the translation check (database, final term, its translation and
count), kept in Postgres and reused for a rephrased question so that it skips the refinement calls.

A stored strategy is reused only when the new question's distinctive tokens — any token with a digit, written with a
capital, or absent from the common-word list — are exactly the stored ones, and then only when the token overlap
(Dice coefficient) reaches MIN_DICE. The gate, not the score, is what keeps BRCA1 from taking BRCA2's strategy (they
overlap highly) and "type 1 diabetes" from taking "type 2"'s; embedding similarity alone would put them together.
A missed paraphrase costs one refinement loop; a false match would answer with the wrong literature. The search
always runs again with the reused term and its translation is checked again, so counts are always fresh.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from dagster_project.core.text import STOPWORDS, words
from retrieval.model.literature import SearchTrail

log = logging.getLogger(__name__)
MIN_DICE = 0.6
# Words every literature question uses, on top of the English stop words: they say what is asked, not what about.
_LITERATURE_QUESTION_WORDS = """
many number count articles article papers paper publications publication studies study records record pubmed
newest latest recent recently relevant top show list find give published appeared titles title abstract abstracts
literature research say says said regarding concerning since year years
"""
LITERATURE_QUESTION_WORDS = frozenset(_LITERATURE_QUESTION_WORDS.split())
# Only "'" and "-" join a word: "BRCA1/BRCA2" is two tokens.
_TOKEN_JOINERS = "'-"


@dataclass(frozen=True)
class Strategy:
    final_term: str
    translation: str
    attempts: int
    question: str


def tokens(question: str) -> tuple[list[str], list[str]]:
    """(content tokens, distinctive tokens) of a question, both case-folded and sorted, duplicates removed."""
    content, distinctive = set(), set()
    for position, raw in enumerate(words(question, _TOKEN_JOINERS)):
        folded = raw.lower()
        if folded in STOPWORDS or folded in LITERATURE_QUESTION_WORDS:
            continue
        content.add(folded)
        capital = raw != folded and not (position == 0 and raw[1:] == raw[1:].lower())
        if capital or any(ch.isdigit() for ch in raw) or folded not in GENERIC_TOPIC_WORDS:
            distinctive.add(folded)
    return sorted(content), sorted(distinctive)


def dice(a: list[str], b: list[str]) -> float:
    return 2 * len(set(a) & set(b)) / (len(set(a)) + len(set(b))) if a or b else 0.0


def choose(question: str, stored: list[tuple[list[str], Strategy]], gate: bool = True) -> Strategy | None:
    """The stored strategy a question may reuse: among those whose distinctive tokens are exactly the question's
    (`gate` off: any), the one with the highest token overlap, if it reaches MIN_DICE. `stored` holds each
    strategy with its question's content tokens."""
    content, distinctive = tokens(question)
    best: tuple[float, Strategy] | None = None
    for stored_tokens, strategy in stored:
        if gate and tokens(strategy.question)[1] != distinctive:
            continue
        score = dice(content, stored_tokens)
        if score >= MIN_DICE and (best is None or score > best[0]):
            best = (score, strategy)
    return best[1] if best else None


class StrategyMemory:
    """Read and write strategies; a database that cannot be reached makes it forget, never fails a question."""

    def __init__(self, engine: Engine, db: str = "pubmed") -> None:
        self.engine = engine
        self.db = db

    def lookup(self, question: str) -> Strategy | None:
        content, distinctive = tokens(question)
        if not content:
            return None
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(
                    text(
                        "SELECT question, tokens, final_term, translation, attempts FROM literature_strategies "
                        "WHERE db = :db AND distinctive = CAST(:distinctive AS TEXT[])"
                    ),
                    {"db": self.db, "distinctive": distinctive},
                ).all()
        except SQLAlchemyError as exc:
            log.warning("strategy memory unavailable: %s", exc)
            return None
        stored = [
            (list(row.tokens), Strategy(row.final_term, row.translation, row.attempts, row.question)) for row in rows
        ]
        return choose(question, stored)

    def remember(self, question: str, trail: SearchTrail) -> None:
        """Keep a strategy that passed the check; a rephrasing that reused one bumps its use count."""
        final = trail.final
        content, distinctive = tokens(question)
        if final is None or not trail.passed or not content:
            return
        row = {
            "db": self.db,
            "key": " ".join(content),
            "question": question,
            "tokens": content,
            "distinctive": distinctive,
            "term": final.term,
            "translation": final.translation,
            "count": final.count,
            "attempts": len(trail.attempts),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    text(
                        "INSERT INTO literature_strategies (db, question_key, question, tokens, distinctive, "
                        "final_term, "
                        "translation, record_count, attempts) VALUES (:db, :key, :question, CAST(:tokens AS TEXT[]), "
                        "CAST(:distinctive AS TEXT[]), :term, :translation, :count, :attempts) "
                        "ON CONFLICT (db, question_key) DO UPDATE SET final_term = EXCLUDED.final_term, "
                        "translation = EXCLUDED.translation, record_count = EXCLUDED.record_count, "
                        "attempts = GREATEST(literature_strategies.attempts, EXCLUDED.attempts), "
                        "uses = literature_strategies.uses + 1, last_used_at = now()"
                    ),
                    row,
                )
                if trail.reused_strategy:
                    conn.execute(
                        text(
                            "UPDATE literature_strategies SET uses = uses + 1, last_used_at = now() "
                            "WHERE db = :db AND final_term = :term AND question_key <> :key"
                        ),
                        row,
                    )
        except SQLAlchemyError as exc:
            log.warning("strategy memory not written: %s", exc)


# Words of a topic that say nothing distinctive about it (a question's other words are distinctive; the English stop
# words never reach this test).
_GENERIC_TOPIC_WORDS = """
effect effects role roles use used using treatment treatments therapy therapies risk risks patients patient people
disease diseases human humans association associated outcome outcomes new novel early late long short high low
increase increased decrease decreased level levels factor factors protection protective cell cells gene genes
protein proteins function functions response responses analysis review reviews trial trials clinical model models
mechanism mechanisms change changes related among across versus vs health care
"""
GENERIC_TOPIC_WORDS = frozenset(_GENERIC_TOPIC_WORDS.split())
