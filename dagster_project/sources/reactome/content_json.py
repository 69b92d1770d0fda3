"""Reading Reactome ContentService JSON: whole-file shape checks, and the object identity its serialiser writes.

The ContentService serialises its graph objects with Jackson, and graph-core's `DatabaseObject` carries
`@JsonIdentityInfo(generator = PropertyGenerator, property = "dbId")`: within one response an object is written in
full the first time it occurs and as its bare integer `dbId` every later time, at the top level of an array as well
as nested (a summation two pathways share, a reaction that a sub-pathway's `hasEvent` already listed). `Identity`
holds the objects one response has written so far, so a reader can turn such an integer back into its object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# The ReactionLikeEvent subclasses of Reactome's data model (graph-core domain.model): all of them are reactions.
REACTION_CLASSES = frozenset(
    {"Reaction", "BlackBoxEvent", "Polymerisation", "Depolymerisation", "FailedReaction", "CellDevelopmentStep"}
)
# containedEvents also lists the sub-pathways, each a pathway record of its own.
PATHWAY_CLASSES = frozenset({"Pathway", "TopLevelPathway", "CellLineagePath"})


@dataclass(frozen=True)
class Dangling:
    """A bare `dbId` where an object belongs, with no object of that dbId earlier in the same response."""

    db_id: int

    @property
    def reason(self) -> str:
        return f"dbId reference {self.db_id} names no object written earlier in the same response"


class Identity:
    """The objects of ONE ContentService response by dbId, the first full occurrence of each winning.

    Register each element of the response before reading it (`register`), then read every place where an object is
    expected through `resolve`: an integer there (never a JSON boolean, which Python counts as one) becomes the
    object written earlier, or a `Dangling`.
    """

    def __init__(self) -> None:
        self._objects: dict[int, dict[str, Any]] = {}

    def register(self, value: object) -> None:
        """Index every object with an integer dbId in `value`, in document order (an explicit stack, so a deeply
        nested answer cannot exhaust Python's recursion limit)."""
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                db_id = node.get("dbId")
                if isinstance(db_id, int) and not isinstance(db_id, bool):
                    self._objects.setdefault(db_id, node)
                stack.extend(reversed(list(node.values())))
            elif isinstance(node, list):
                stack.extend(reversed(node))

    def resolve(self, value: object) -> object:
        """`value` itself, unless it is a bare dbId: then the object it names, or a Dangling."""
        if isinstance(value, int) and not isinstance(value, bool):
            return self._objects.get(value, Dangling(value))
        return value


def json_kind(value: object) -> str:
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")


def read_json(data: bytes, expected: type, shape: str) -> tuple[Any, str | None]:
    """The parsed body, or None and why it is unusable as a whole (not UTF-8, not JSON, not the expected shape)."""
    try:
        body = json.loads(data)
    except UnicodeDecodeError as exc:
        return None, f"file is not UTF-8 text: {exc}"
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(body, expected):
        return None, f"expected {shape}, got a JSON {json_kind(body)}"
    return body, None
