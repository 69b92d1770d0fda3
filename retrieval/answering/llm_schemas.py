"""The JSON schema of each LLM task's reply, sent as `response_format: json_schema` (strict Structured Outputs:
every object closes its properties and requires all of them). A server that enforces them (OpenAI, llama.cpp's
grammars, vLLM's guided decoding) cannot return anything else; with weaker JSON modes the same shapes are still
checked on arrival (pydantic in llm.py and model/answer.py), so the schema is a help, never the only check.
"""

from __future__ import annotations

from typing import Any

_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
_CONFIDENCE = {"type": "number", "minimum": 0, "maximum": 1}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


SCREEN_SCHEMA = _object(allowed={"type": "boolean"}, reason=_STRING)
REWRITE_SCHEMA = _object(queries={**_STRINGS, "minItems": 1, "maxItems": 4})
JUDGE_SCHEMA = _object(
    verdict={"type": "string", "enum": ["good", "partial", "bad"]},
    confidence=_CONFIDENCE,
    missing=_STRINGS,
    rationale=_STRING,
)
ANSWER_SCHEMA = _object(
    answer=_STRING,
    claims={"type": "array", "items": _object(text=_STRING, citations=_STRINGS)},
    citations=_STRINGS,
    confidence=_CONFIDENCE,
    reasoning_summary=_STRING,
)
