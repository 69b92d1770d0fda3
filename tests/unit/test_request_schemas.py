"""The request bodies' patterns mean the same to JSON Schema clients, pydantic (Rust regex) and Python."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from serving.schemas import QUESTION_PATTERN, QueryRequest

WHITE_SPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]


@pytest.mark.parametrize("blank", [*WHITE_SPACE, "\x85 \xa0", "\u3000\n"])
def test_a_question_of_white_space_only_is_rejected_by_the_schema_itself(blank: str) -> None:
    # U+0085 is not `\s` in ECMA regexes: with `\s` in the pattern, a client's schema said "valid" and the
    # service said 422 (schemathesis ST202).
    assert re.fullmatch(QUESTION_PATTERN, blank) is None
    with pytest.raises(ValidationError):
        QueryRequest(question=blank)


@pytest.mark.parametrize("question", ["a", "\ufeffTP53?", " glycolysis ", "é", "\u2003x"])
def test_any_visible_character_makes_a_question(question: str) -> None:
    assert re.fullmatch(QUESTION_PATTERN, question)
    assert QueryRequest(question=question).question == question.strip()
