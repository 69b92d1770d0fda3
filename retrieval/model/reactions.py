"""Reaction ids and names, and the compounds that take part in reactions, in questions — from the `reactions` and
`reaction_participants` tables (Postgres, read with the pathway lexicon), so a question is read without the graph.

A reaction is named by its stable id (R-HSA-70420) or by its whole name, case and punctuation folded ("HK1,2,3,GCK,
HKDC1 phosphorylate Glc to form G6P"). A compound is named by its ChEBI id or by the name Reactome gives it (ATP,
G6P, PYR), matched as a whole word in any case; names of two characters only as written ("Pi", not "pi").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.engine import Connection

from retrieval.model.spelling import fold

_REACTION_ID = re.compile(r"(?<![\w-])(R-HSA-\d+)(?![\w-])", re.I)
_CHEBI = re.compile(r"\bCHEBI[:\s]\s?(\d+)\b", re.I)
SHORT_NAME = 2  # compound names this short ("Pi", "O2") match only as written


@dataclass(frozen=True)
class Named:
    id: str
    name: str


@dataclass
class ReactionLexicon:
    """Reactions by id and folded name, and compound names → ChEBI ids."""

    reactions: dict[str, Named] = field(default_factory=dict)
    compounds: dict[str, Named] = field(default_factory=dict)  # ChEBI id → its Reactome name
    _names: dict[str, str] = field(default_factory=dict)
    _compound_by_name: dict[str, Named] = field(default_factory=dict)
    _compound_pattern: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        self._names = {fold(r.name): r.id for r in self.reactions.values() if len(fold(r.name)) > 8}
        self._compound_by_name = {c.name.lower(): c for c in self.compounds.values()}
        names = sorted({c.name for c in self.compounds.values()}, key=len, reverse=True)
        long = [re.escape(n) for n in names if len(n) > SHORT_NAME]
        short = [re.escape(n) for n in names if len(n) <= SHORT_NAME]
        parts = [f"(?i:{'|'.join(long)})"] if long else []
        parts += short
        self._compound_pattern = re.compile(rf"(?<![\w-])({'|'.join(parts)})(?![\w-])") if parts else None

    def __len__(self) -> int:
        return len(self.reactions)

    def reactions_in(self, question: str) -> list[Named]:
        """Reactions the question names by id (held or not: the caller says which it holds) or by whole name."""
        out = [self.reactions.get(m.upper(), Named(m.upper(), "")) for m in _REACTION_ID.findall(question)]
        # Longest names first, each taken out once matched: "A <=> B + C" holds the name "B <=> C" folded.
        folded = f" {fold(question)} "
        for name, rid in sorted(self._names.items(), key=lambda item: -len(item[0])):
            if f" {name} " in folded:
                out.append(self.reactions[rid])
                folded = folded.replace(f" {name} ", " | ")
        return list({r.id: r for r in out}.values())

    def holds(self, reaction_id: str) -> bool:
        return reaction_id in self.reactions

    def compounds_in(self, question: str) -> list[Named]:
        """Compounds named by ChEBI id or by a name a reaction gives them, in order of appearance."""
        found: list[tuple[int, Named]] = [
            (m.start(), self.compounds.get(f"CHEBI:{m.group(1)}", Named(f"CHEBI:{m.group(1)}", "")))
            for m in _CHEBI.finditer(question)
        ]
        if self._compound_pattern is not None:
            found += [
                (m.start(), self._compound_by_name[m.group(1).lower()])
                for m in self._compound_pattern.finditer(question)
            ]
        return list({c.id: c for _, c in sorted(found, key=lambda item: item[0])}.values())


READ = {
    "reactions": "SELECT r.reaction_id, r.name FROM reactions r JOIN pathways p "
    "ON p.pathway_id = r.pathway_id AND p.status = 'active' ORDER BY r.reaction_id",
    "compounds": "SELECT DISTINCT ON (entity_id) entity_id, name FROM reaction_participants "
    "WHERE entity_kind = 'compound' AND name <> '' ORDER BY entity_id, name",
}


def read_reactions(conn: Connection) -> ReactionLexicon:
    rows = conn.execute(text(READ["reactions"])).all()
    compounds = conn.execute(text(READ["compounds"])).all()
    return ReactionLexicon(
        reactions={r.reaction_id: Named(r.reaction_id, r.name) for r in rows},
        compounds={c.entity_id: Named(c.entity_id, c.name) for c in compounds},
    )
