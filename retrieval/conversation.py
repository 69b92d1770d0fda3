"""Asking in a conversation: a follow-up ("and its sub-pathways?") is read against the previous turn's entities,
then answered by the pipeline; the turn is stored by whatever keeps conversations (serving's AnswerStore)."""

from __future__ import annotations

from typing import Protocol

from retrieval.kinds.registry import turn_context
from retrieval.model.answer import FinalAnswer
from retrieval.model.types import Filters, Mode
from retrieval.pipeline import EventSink, Pipeline
from retrieval.question.followup import TurnContext, resolve


class UnknownConversation(LookupError):
    pass


class ConversationStore(Protocol):
    def start(self) -> str: ...

    def exists(self, conversation_id: str) -> bool: ...

    def last_context(self, conversation_id: str) -> TurnContext | None: ...

    def save(
        self, conversation_id: str, question: str, asked_as: str, context: TurnContext, answer: FinalAnswer
    ) -> FinalAnswer: ...


def ask_in_conversation(
    pipeline: Pipeline,
    store: ConversationStore,
    question: str,
    mode: Mode | None = None,
    filters: Filters | None = None,
    conversation_id: str | None = None,
    on_event: EventSink | None = None,
) -> FinalAnswer:
    """One turn: resolve a follow-up against the previous turn, answer it, store it. An unknown conversation id
    raises UnknownConversation; no id starts a new conversation."""
    if conversation_id is not None and not store.exists(conversation_id):
        raise UnknownConversation(conversation_id)
    conversation_id = conversation_id or store.start()
    previous = store.last_context(conversation_id)
    asked_as, note = resolve(question, previous, *pipeline.retriever.lexicons())
    answer = pipeline.ask(asked_as, mode, filters, on_event)
    if note:
        answer.warnings.append(note)
    return store.save(conversation_id, question, asked_as, turn_context(asked_as, answer), answer)
