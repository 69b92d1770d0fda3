"""Answers and conversations in Postgres: every served answer gets an id, every question a conversation turn
(retrieval/conversation.py asks; this module only stores and reads).

A turn stores the question as asked, the question as answered (after follow-up resolution), the entities a later
turn may refer to, and the whole FinalAnswer. Conversations untouched for longer than the retention are deleted
with their answers whenever a new conversation starts.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.engine import Engine

from retrieval.conversation import UnknownConversation
from retrieval.model.answer import FinalAnswer
from retrieval.question.followup import TurnContext


@dataclass(frozen=True)
class StoredTurn:
    """A turn as the store reads it back (serving/schemas.py's `Turn` is its JSON form in the API)."""

    answer_id: str
    turn: int
    question: str
    asked_as: str
    created_at: datetime
    answer: FinalAnswer


class AnswerStore:
    def __init__(self, engine: Engine, retention_days: int) -> None:
        self.engine = engine
        self.retention_days = retention_days

    def start(self) -> str:
        conversation_id = uuid.uuid4().hex
        with self.engine.begin() as conn:
            conn.execute(
                text("DELETE FROM conversations WHERE updated_at < now() - make_interval(days => :d)"),
                {"d": self.retention_days},
            )
            conn.execute(text("INSERT INTO conversations (id) VALUES (:id)"), {"id": conversation_id})
        return conversation_id

    def exists(self, conversation_id: str) -> bool:
        if "\x00" in conversation_id:  # no stored id holds NUL (Postgres text cannot): unknown, not a 500
            return False
        with self.engine.connect() as conn:
            return (
                conn.execute(text("SELECT 1 FROM conversations WHERE id = :id"), {"id": conversation_id}).first()
                is not None
            )

    def last_context(self, conversation_id: str) -> TurnContext | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                text("SELECT entities FROM answers WHERE conversation_id = :id ORDER BY turn DESC LIMIT 1"),
                {"id": conversation_id},
            ).first()
        return TurnContext(**row.entities) if row and row.entities else None

    def save(
        self, conversation_id: str, question: str, asked_as: str, context: TurnContext, answer: FinalAnswer
    ) -> FinalAnswer:
        """Store one turn (the next number in its conversation, in one transaction); the answer with its ids."""
        answer = answer.model_copy(
            update={
                "answer_id": uuid.uuid4().hex,
                "conversation_id": conversation_id,
                "question": question,
                "asked_as": asked_as,
            }
        )
        with self.engine.begin() as conn:
            conn.execute(text("SELECT id FROM conversations WHERE id = :id FOR UPDATE"), {"id": conversation_id})
            turn: int = conn.execute(
                text("SELECT coalesce(max(turn), 0) + 1 FROM answers WHERE conversation_id = :id"),
                {"id": conversation_id},
            ).scalar_one()
            conn.execute(
                text(
                    "INSERT INTO answers (id, conversation_id, turn, question, asked_as, entities, answer)"
                    " VALUES (:id, :c, :t, :q, :a, CAST(:e AS jsonb), CAST(:ans AS jsonb))"
                ),
                {
                    "id": answer.answer_id,
                    "c": conversation_id,
                    "t": turn,
                    "q": question,
                    "a": asked_as,
                    "e": json.dumps(context.as_json()),
                    "ans": answer.model_dump_json(),
                },
            )
            conn.execute(text("UPDATE conversations SET updated_at = now() WHERE id = :id"), {"id": conversation_id})
        return answer

    def answer(self, answer_id: str) -> FinalAnswer | None:
        if "\x00" in answer_id:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(text("SELECT answer FROM answers WHERE id = :id"), {"id": answer_id}).first()
        return FinalAnswer.model_validate(row.answer) if row else None

    def turns(self, conversation_id: str) -> list[StoredTurn]:
        if not self.exists(conversation_id):
            raise UnknownConversation(conversation_id)
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id, turn, question, asked_as, created_at, answer FROM answers"
                    " WHERE conversation_id = :id ORDER BY turn"
                ),
                {"id": conversation_id},
            ).all()
        return [
            StoredTurn(r.id, r.turn, r.question, r.asked_as, r.created_at, FinalAnswer.model_validate(r.answer))
            for r in rows
        ]
