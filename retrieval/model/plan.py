"""The plan language: a question as a typed query over what Flux holds.

A plan names entities (pathways, genes, compounds, reactions, diseases, papers, categories of pathway), one
relation between them and an operation:

- `subjects REL objects`: "TP53 member_of R-HSA-109581" reads "TP53 is a member of Apoptosis". A list or count
  leaves one side open and says what it `returns`: members of a pathway are `? member_of P` (objects=[P],
  returns gene); the pathways holding a gene are `G member_of ?` (subjects=[G], returns pathway).
- operations: list, count, check (yes/no), intersect and difference (of two pathways' members), compare, path
  (what connects two entities), describe (one entity), search (the literature) and abstain (a fact type or an
  entity Flux does not hold).

Rules write plans offline (retrieval/kinds/); a configured LLM may propose one as structured output
(`plan_schema()`), which is validated here and resolved against the lexicons before anything runs. The executor
answers every plan from the tables and the graph, so a plan can ask only for what Flux holds: a fact type it does
not hold is answered as missing, never guessed.

Reactions: `? member_of P returns reaction` (a pathway's reactions), `describe participates_in R` (what reaction R
consumes, produces, is catalysed and regulated by), `G participates_in ? returns reaction` (the reactions a gene or
compound takes part in, `role` narrowing it) and `X precedes ? returns reaction` / `? precedes X` (what lies
downstream / upstream of a gene, compound or reaction, walked `depth` steps).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from retrieval.model.literature import LiteratureRequest

EntityType = Literal["pathway", "gene", "compound", "reaction", "disease", "paper", "category"]
Relation = Literal[
    "member_of",
    "part_of",
    "in_category",
    "corresponds_to",
    "gene_record",
    "release_change",
    "connected_to",
    "mentions",
    "participates_in",
    "precedes",
    "associated_with",
]
Operation = Literal[
    "list", "count", "check", "intersect", "difference", "compare", "path", "describe", "search", "abstain"
]
# Fact types a question may ask for that no Flux source holds (yet): answered as such, with confidence 0.
FactType = Literal["drug", "variant", "expression", "clinical_trial", "structure", "disease_association", "reaction"]
FACT_TYPES: tuple[FactType, ...] = get_args(FactType)
ABSENT_WHAT = Literal["pathway", "gene", "identifier", "compound", "name"]
GeneRecordField = Literal["symbol", "ids", "locus_type", "location", "summary"]

MAX_PATH_STEPS = 4  # "what connects A and B": graph paths up to this many relationships
MAX_ENTITIES = 8  # entities on one side of a plan: more is a list the executor does not walk
MAX_CHOICES = 24  # the options of one multiple-choice check ("which of A, B, … is in X?"), each checked


class Entity(BaseModel):
    """One thing a plan is about, resolved to what Flux holds (`id` is a stable id: R-HSA-…, hsa…, HGNC:…,
    CHEBI:… or KEGG C-number; a category is `signalling`, `metabolic` or `disease`)."""

    model_config = {"frozen": True}

    type: EntityType
    id: str
    name: str = ""
    source: str = Field(default="", description="reactome | kegg | hgnc | chebi | …")
    asked_as: str = Field(default="", description="How the question wrote it, where that differs.")
    matched_by: str = Field(default="", description="Genes: symbol, alias, previous symbol, HGNC id, …")

    def label(self) -> str:
        return f"{self.id} {self.name!r}" if self.name and self.name != self.id else self.id


class Absent(BaseModel):
    """What a question named that Flux does not hold."""

    what: ABSENT_WHAT
    asked: str = Field(description="The words or id the question used.")
    needed_for: str = Field(default="", description="The kind of question it was asked for.")
    closest: list[Entity] = Field(default_factory=list, description="The closest names Flux does hold.")


# relation → (subject types, object types): which entities a relation may join.
SIGNATURES: dict[Relation, tuple[frozenset[str], frozenset[str]]] = {
    "member_of": (frozenset({"gene", "compound", "reaction"}), frozenset({"pathway"})),
    "part_of": (frozenset({"pathway"}), frozenset({"pathway"})),
    "in_category": (frozenset({"pathway"}), frozenset({"category"})),
    "corresponds_to": (frozenset({"pathway"}), frozenset({"pathway"})),
    "gene_record": (frozenset({"gene"}), frozenset()),
    "release_change": (frozenset({"pathway"}), frozenset()),
    "connected_to": (frozenset({"pathway", "gene", "compound"}), frozenset({"pathway", "gene", "compound"})),
    "mentions": (frozenset({"paper"}), frozenset({"gene", "pathway"})),
    "participates_in": (frozenset({"gene", "compound"}), frozenset({"reaction", "pathway"})),
    "precedes": (
        frozenset({"reaction", "gene", "compound", "pathway"}),
        frozenset({"reaction", "gene", "compound", "pathway"}),
    ),
    "associated_with": (frozenset({"gene"}), frozenset({"disease"})),  # returns gene, disease or pathway
}
# Relations Flux holds no data for yet: a plan asking for one is answered as that missing fact type.
NOT_HELD: dict[Relation, FactType] = {}
ReactionRole = Literal["input", "output", "catalyst", "positive_regulator", "negative_regulator"]
CATEGORIES = ("signalling", "metabolic", "disease")


class Plan(BaseModel):
    """A question as a typed query; `kind` names the registered kind that executes it (retrieval/kinds/)."""

    kind: str
    operation: Operation
    relation: Relation | None = None
    subjects: list[Entity] = Field(
        default_factory=list, description="The left side of the relation, in the order the question names them."
    )
    objects: list[Entity] = Field(default_factory=list, description="The right side.")
    returns: EntityType | None = Field(default=None, description="What a list or count returns.")
    depth: int | None = Field(
        default=1,
        ge=1,
        le=64,
        description="part_of: 1 = direct, None = at any depth; path: the most relationships walked.",
    )
    source: str = Field(
        default="",
        description="Only this database's pathways ('reactome', 'kegg'), or the database a pathway is asked of.",
    )
    name_filter: str = Field(default="", description="Only returned entities whose name contains this.")
    field: GeneRecordField | None = Field(default=None, description="gene_record: the field asked for.")
    role: ReactionRole | None = Field(default=None, description="participates_in: only this role in reactions.")
    counted: bool = Field(
        default=False,
        description="The question asks how many (of any list, intersection or "
        "difference); a `count` operation always is.",
    )
    scope: FactType | None = Field(default=None, description="abstain: the fact type Flux does not hold.")
    absent: Absent | None = Field(default=None, description="abstain: the entity Flux does not hold.")
    reason: str = ""
    negated: bool = Field(
        default=False,
        description='check: the sentence denies the relation ("X is not part of Y, right?"); the verdict '
        "answers the sentence as written.",
    )
    choice: bool = Field(
        default=False,
        description='check: "which of A, B, C …": the answer names the options for which the sentence holds, '
        "with no yes/no verdict.",
    )
    proposed_by: Literal["rules", "llm"] = "rules"
    corrections: list[tuple[str, str]] = Field(default_factory=list, description="Typos read as name words.")
    literature: LiteratureRequest | None = Field(
        default=None, description="search: a question for PubMed itself (a count, articles, PMID facts or links)."
    )

    # --- what the plan names, for readers that want one list ------------------------------------------------
    @property
    def entities(self) -> list[Entity]:
        return [*self.subjects, *self.objects]

    def of_type(self, entity_type: EntityType) -> list[Entity]:
        return [e for e in self.entities if e.type == entity_type]

    @property
    def pathways(self) -> list[Entity]:
        return self.of_type("pathway")

    @property
    def genes(self) -> list[Entity]:
        return self.of_type("gene")

    @property
    def count(self) -> bool:
        return self.operation == "count" or self.counted

    @property
    def names(self) -> tuple[str, ...]:
        """The pathway names and gene symbols the question was read to name."""
        return tuple(e.name or e.id for e in self.entities if e.type in ("pathway", "gene"))

    def explain(self) -> str:
        """One line a person can check: `check part_of R-HSA-70171 'Glycolysis' → R-HSA-1430728 'Metabolism'`."""
        parts = [self.operation, "which of" if self.choice else "", "not" if self.negated else "", self.relation or ""]
        if self.subjects:
            parts.append(", ".join(e.label() for e in self.subjects))
        if self.objects:
            parts.append("→ " + ", ".join(e.label() for e in self.objects))
        if self.returns:
            parts.append(f"returns {self.returns}")
        extra = {
            "depth": "any" if self.depth is None else self.depth if self.depth != 1 else None,
            "source": self.source,
            "name contains": self.name_filter,
            "field": self.field,
            "role": self.role,
            "scope": self.scope,
            "absent": self.absent.asked if self.absent else None,
            "literature": self.literature.describe() if self.literature else None,
        }
        parts += [f"{k} {v}" for k, v in extra.items() if v]
        return " ".join(p for p in parts if p) + f"  [{self.kind}, by {self.proposed_by}]"


class PlanError(ValueError):
    """A plan that cannot run as written: what is wrong, in words a user can read."""


_NEEDS = {  # operation → (least subjects + objects, least objects) a plan of it must name
    "check": (2, 1),
    "path": (2, 1),
    "intersect": (1, 1),
    "difference": (2, 2),
    "compare": (2, 0),
    "describe": (1, 0),
    "list": (1, 0),
    "count": (1, 0),
}


def validate(plan: Plan) -> Plan:
    """Check a plan's shape before anything runs: a known relation joining entities of the types it joins, what
    its operation needs, bounded sizes. Resolving the entities against what Flux holds is the reader's job."""
    if plan.operation in ("search", "abstain"):
        if plan.operation == "abstain" and plan.scope is None and plan.absent is None:
            raise PlanError("an abstaining plan names the fact type or the entity Flux does not hold")
        return plan
    least, least_objects = _NEEDS[plan.operation]
    if len(plan.entities) < least or len(plan.objects) < least_objects:
        raise PlanError(
            f"a {plan.operation} plan needs {least} entities ({least_objects} on the object side); "
            f"it names {len(plan.subjects)} and {len(plan.objects)}"
        )
    most = MAX_CHOICES if plan.choice and plan.operation == "check" else MAX_ENTITIES
    if len(plan.subjects) > most or len(plan.objects) > most:
        raise PlanError(f"a plan names at most {most} entities on each side")
    if plan.relation is not None:
        _check_signature(plan)
    elif plan.operation not in ("describe", "compare", "intersect", "difference"):
        raise PlanError(f"a {plan.operation} plan needs a relation")
    if plan.operation in ("list", "count") and plan.returns is None:
        raise PlanError(f"a {plan.operation} plan says what it returns")
    if plan.operation == "path" and (plan.depth is None or plan.depth > MAX_PATH_STEPS):
        raise PlanError(f"a path is searched over at most {MAX_PATH_STEPS} relationships")
    return plan


def _check_signature(plan: Plan) -> None:
    relation = plan.relation
    assert relation is not None
    subject_types, object_types = SIGNATURES[relation]
    if plan.operation == "compare" or relation == "connected_to":
        return  # either side may hold any entity the relation joins
    wrong = [e for e in plan.subjects if e.type not in subject_types]
    wrong += [e for e in plan.objects if object_types and e.type not in object_types]
    if plan.operation in ("intersect", "difference"):
        wrong = [e for e in plan.objects if e.type != "pathway"]
    if wrong:
        allowed = f"{'/'.join(sorted(subject_types))} {relation} {'/'.join(sorted(object_types)) or '—'}"
        raise PlanError(f"{relation} does not join {', '.join(f'{e.type} {e.id}' for e in wrong)} (it reads {allowed})")


def not_held(plan: Plan) -> FactType | None:
    """The fact type a plan asks for that Flux holds no data for, if any."""
    return NOT_HELD.get(plan.relation) if plan.relation else None


def plan_schema() -> dict[str, Any]:
    """The JSON schema an LLM's proposed plan must match (structured output): entities by name or id, the
    relation, the operation and its options; ids are resolved and checked by the reader afterwards."""
    entity = {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "text"],
        "properties": {
            "type": {"type": "string", "enum": list(get_args(EntityType))},
            "text": {
                "type": "string",
                "description": "The entity as the question names it: "
                "an id (R-HSA-70171, hsa00010, HGNC:11998, CHEBI:15361, C00022), a gene "
                "symbol or a pathway name",
            },
        },
    }

    def nullable(values: tuple[str, ...]) -> dict[str, Any]:
        return {"anyOf": [{"type": "string", "enum": list(values)}, {"type": "null"}]}

    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "operation",
            "relation",
            "subjects",
            "objects",
            "returns",
            "depth",
            "source",
            "field",
            "role",
            "scope",
        ],
        "properties": {
            "operation": {"type": "string", "enum": list(get_args(Operation))},
            "relation": nullable(get_args(Relation)),
            "subjects": {"type": "array", "items": entity, "maxItems": MAX_ENTITIES},
            "objects": {"type": "array", "items": entity, "maxItems": MAX_ENTITIES},
            "returns": nullable(get_args(EntityType)),
            "depth": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 64}, {"type": "null"}]},
            "source": {"type": "string", "enum": ["", "reactome", "kegg"]},
            "field": nullable(get_args(GeneRecordField)),
            "role": nullable(get_args(ReactionRole)),
            "scope": nullable(FACT_TYPES),
        },
    }
