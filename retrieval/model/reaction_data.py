"""`FinalAnswer.data` for the reaction kinds: a pathway's reactions, what a reaction consumes and produces, the
reactions a gene or compound takes part in, and walks downstream or upstream along outputs → inputs and PRECEDES."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from retrieval.model.refs import NodeRef

Role = Literal["input", "output", "catalyst", "positive_regulator", "negative_regulator"]
ROLES: tuple[Role, ...] = ("input", "output", "catalyst", "positive_regulator", "negative_regulator")


class ReactionRef(BaseModel):
    id: str
    name: str = ""
    pathway: str = Field(default="", description="The pathway that holds the reaction directly.")


class Participant(BaseModel):
    """What takes part in a reaction, in one role: a gene (HGNC), a compound (ChEBI) or a complex / set."""

    id: str
    name: str = ""
    entity: Literal["gene", "compound", "complex", "set"]
    role: Role
    parts: list[str] = Field(default_factory=list, description="A complex's or set's genes (symbols) and compounds.")


class PathwayReactionsData(BaseModel):
    kind: Literal["pathway_reactions"] = "pathway_reactions"
    pathway: NodeRef
    reactions: list[ReactionRef] = Field(description="In PRECEDES order where the steps give one, else by id.")
    ordered: bool = Field(default=False, description="The steps put every listed reaction in one order.")
    steps: int = Field(default=0, description="PRECEDES edges between the listed reactions.")
    sub_pathways: int = Field(default=0, description="Sub-pathways whose reactions are listed with the pathway's own.")
    count: bool = False


class ReactionScopeData(BaseModel):
    """A reaction question about something Flux holds no reactions for."""

    kind: Literal["reaction_scope"] = "reaction_scope"
    asked: str = Field(description="What the question named: a pathway, reaction id or the words it used.")
    pathway: NodeRef | None = None
    held: list[NodeRef] = Field(default_factory=list, description="The pathways Flux holds reactions for.")
    reactions: int = Field(default=0, description="Reactions Flux holds in all.")
    held_here: int = Field(
        default=0,
        description="Reactions Flux does hold for the pathway asked about, when it "
        "holds some but not the fact the question asks for (a rate-limiting step).",
    )


class ReactionParticipantsData(BaseModel):
    kind: Literal["reaction_participants"] = "reaction_participants"
    reaction: ReactionRef
    participants: list[Participant]
    preceded_by: list[ReactionRef] = Field(default_factory=list)
    followed_by: list[ReactionRef] = Field(default_factory=list)
    asked_role: Role | None = Field(default=None, description="The role the question asked about, if one.")


class Involvement(BaseModel):
    reaction: ReactionRef
    role: Role
    via: NodeRef | None = Field(default=None, description="The complex or set it takes part through, if any.")


class EntityReactionsData(BaseModel):
    kind: Literal["entity_reactions"] = "entity_reactions"
    entity: NodeRef
    involvements: list[Involvement] = Field(description="One per reaction and role, by reaction id.")
    asked_role: Role | None = None
    count: bool = False

    @property
    def reactions(self) -> list[ReactionRef]:
        return list({i.reaction.id: i.reaction for i in self.involvements}.values())


class WalkStep(BaseModel):
    """One step of a walk: from a reaction to the next, through a shared entity or a PRECEDES edge."""

    source: ReactionRef
    target: ReactionRef
    through: NodeRef | None = Field(
        default=None, description="The output of one that is an input of the other; None for a PRECEDES edge."
    )
    depth: int


class ReactionWalkData(BaseModel):
    kind: Literal["reaction_walk"] = "reaction_walk"
    start: NodeRef
    start_kind: Literal["gene", "compound", "reaction"]
    direction: Literal["downstream", "upstream"]
    first: list[ReactionRef] = Field(
        description="Where the walk starts: the start reaction, or the reactions the "
        "gene or compound takes part in (downstream) or comes out of (upstream)."
    )
    steps: list[WalkStep]
    max_depth: int
    hubs_skipped: list[NodeRef] = Field(
        default_factory=list,
        description="Entities so common (ATP, H2O, ubiquitin) that the walk does not pass through them.",
    )
    start_is_hub: bool = Field(
        default=False, description="The start itself is such a hub: the walk stops at its own reactions."
    )
    truncated: bool = Field(default=False, description="More reactions were reached than the answer lists.")
