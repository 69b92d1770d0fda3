"""The request and response bodies of the HTTP service that are not the pipeline's own (FinalAnswer,
SearchResult): what a client sends to ask or search, and a stored conversation."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from retrieval.model.answer import FinalAnswer
from retrieval.model.types import Filters, Mode

QUESTION_PATTERN = (
    r"^[^\x00]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    r"[^\x00]*$"
)


class _Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # No NUL: Postgres text cannot hold it, and answers are stored. At least one character that is not white space
    # by Python's str.isspace, spelled out: `\s` means different things to JSON Schema (ECMA: not U+0085), to
    # pydantic's Rust regex and to Python, and schemathesis found the gap ("\u0085" passed the schema, got a 422).
    question: str = Field(
        min_length=1,
        pattern=QUESTION_PATTERN,
        description="A question about pathways, genes or the literature (at least one character "
        "that is not white space; no NUL).",
    )
    filters: Filters | None = Field(default=None, description="Restrict evidence; filtered requests are not cached.")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        return value.strip()


class QueryRequest(_Question):
    mode: Mode | None = Field(default=None, description="quick: one retrieval pass; thinking: the judge loop.")
    # No NUL: Postgres text cannot hold it (schemathesis found the 500).
    conversation_id: str | None = Field(
        default=None,
        max_length=64,
        pattern=r"^[^\x00]*$",
        description="Continue this conversation: a follow-up's references are resolved from its previous turn.",
    )


class SearchRequest(_Question):
    pass


class Turn(BaseModel):
    answer_id: str
    turn: int
    question: str
    asked_as: str
    created_at: str
    answer: FinalAnswer


class Conversation(BaseModel):
    conversation_id: str
    turns: list[Turn]
