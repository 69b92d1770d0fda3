"""What a reaction question asks and names: the words that ask about reactions, their direction (downstream,
upstream) and role (consumes, produces, catalyses, regulates), and the reactions, genes and compounds it names.
The reaction kinds' recognisers (retrieval/kinds/*reaction*) share these; this module holds no kind of its own."""

from __future__ import annotations

import re

from retrieval.model.plan import Entity, ReactionRole
from retrieval.question.reading import Read, gene_entity

REACTION_WORD = re.compile(r"\breactions?\b|\breaction steps?\b|\bsteps?\b|\bevents?\b", re.I)
DOWNSTREAM = re.compile(
    r"\bdownstream\b|\bwhat (?:happens|comes|follows) (?:after|next)\b|\bnext steps?\b|"
    r"\bsteps? after\b|\bafter (?:that|it|this)\b.*\bwhat\b|\bwhat (?:do|does) .+ lead to\b|"
    r"\bwhich reactions? follows?\b|\bwhat follows\b",
    re.I,
)
UPSTREAM = re.compile(
    r"\bupstream\b|\b(?:happens?|comes?|occurs?) before\b|\bsteps? before\b|\bprecede[sd]?\b|"
    r"\bpreceding\b|\bwhat leads (?:up )?to\b|\blead(?:s)? into\b|\bfeed(?:s)? into\b|"
    r"\bwalk back\b",
    re.I,
)
# role words, in the order they are tried: "Which reactions produce ATP?" is about outputs.
ROLE_WORDS: tuple[tuple[ReactionRole, re.Pattern[str]], ...] = (
    ("catalyst", re.compile(r"\bcataly[sz]\w*|\bcatalysts?\b|\benzymes?\b", re.I)),
    ("negative_regulator", re.compile(r"\binhibit\w*|\bnegative(?:ly)? regulat\w*|\brepress\w*", re.I)),
    ("positive_regulator", re.compile(r"\bactivat\w*|\bpositive(?:ly)? regulat\w*|\bstimulat\w*", re.I)),
    (
        "output",
        re.compile(
            r"\bproduc\w*|\boutputs?\b|\bgenerat\w*|\byield\w*|\bform(?:s|ed)?\b|\bmakes?\b|"
            r"\breleas\w*",
            re.I,
        ),
    ),
    (
        "input",
        re.compile(
            r"\bconsum\w*|\binputs?\b|\buses?\b|\bsubstrates?\b|\breactants?\b|\bneeds?\b|"
            r"\brequires?\b|\btakes? in\b",
            re.I,
        ),
    ),
)
# "What does reaction R consume?", "inputs and outputs of R": asks for the participants of a named reaction.
PARTICIPANTS = re.compile(
    r"\b(?:consum|produc|inputs?|outputs?|participants?|reactants?|products?|substrates?|"
    r"catal|regulat|inhibit|activat|enzymes?|involv|what (?:goes|comes) (?:in|out)|"
    r"describe|what is|what does|tell me)",
    re.I,
)
MAX_WALK_DEPTH = 3
ENZYME_AFTER = re.compile(r"\s+(?:[\w-]+\s+)?[\w-]*ases?\b", re.I)  # the next word or the one after is an "-ase"
# Asks for reaction-level facts at all, named or not ("What is the rate-limiting step of …?").
ASKS_REACTION = re.compile(
    r"\breactions?\b|\breactants?\b|\bsubstrates?\b|\bcatal[yi][sz]\w*|\bdownstream\b|"
    r"\bupstream\b|\bwhat happens (?:after|next|before)\b|\bnext step\b|"
    r"\bstep (?:after|before)\b|\bprecede[sd]?\b|\bpreceding\b|\brate[- ]limiting\b|"
    r"\bproducts? of\b|\bwhat (?:does|do) .+ (?:produce|consume|convert)\b|"
    # A conversion of a compound, not of an identifier to a symbol ("convert ENSG… to (an) official gene symbol").
    r"\bconver(?:t|ts|sion) (?:of )?\w+ (?:in)?to (?!(?:an? |its |the )?"
    r"(?:(?:official|approved|hgnc|gene) )*(?:symbols?|names?)\b)",
    re.I,
)


def asked_role(question: str) -> ReactionRole | None:
    """The one role the question asks about, or None when it names none (or both inputs and outputs)."""
    roles = [role for role, pattern in ROLE_WORDS if pattern.search(question)]
    if "input" in roles and "output" in roles:
        return None
    return roles[0] if roles else None


def direction(question: str) -> str | None:
    if UPSTREAM.search(question):
        return "upstream"
    if DOWNSTREAM.search(question):
        return "downstream"
    return None


def written(read: Read) -> str:
    """The question as written: typo corrections are made against pathway names, never reaction or role words."""
    return read.as_written or read.question


def reaction_entities(read: Read, held_only: bool = True) -> list[Entity]:
    lexicon = read.pathways.reactions
    return [
        Entity(type="reaction", id=r.id, name=r.name, source="reactome")
        for r in lexicon.reactions_in(written(read))
        if lexicon.holds(r.id) or not held_only
    ]


def unheld_reaction_ids(read: Read) -> list[str]:
    """R-HSA ids the question writes that are neither a pathway nor a reaction Flux holds."""
    lexicon = read.pathways.reactions
    return [
        r.id for r in lexicon.reactions_in(written(read)) if not lexicon.holds(r.id) and r.id not in read.pathways.by_id
    ]


def participant_entities(read: Read) -> list[Entity]:
    """The genes (outside pathway names) and compounds a reaction question names, in order of appearance."""
    named: list[tuple[int, Entity]] = []
    pathway_genes = {g.hgnc_id for g in read.named_genes} - {g.hgnc_id for g in read.genes_outside()}
    for mention in read.mentions:
        if mention.gene.hgnc_id not in pathway_genes:
            named.append((read.question.find(mention.token), gene_entity(mention.gene, mention.token)))
    for compound in read.pathways.reactions.compounds_in(written(read)):
        at = written(read).lower().find((compound.name or compound.id).lower())
        if ENZYME_AFTER.match(written(read)[at + len(compound.name or compound.id) :]):
            continue  # "ATP citrate lyase", "ATP synthase": an enzyme's name, not the compound
        named.append((at, Entity(type="compound", id=compound.id, name=compound.name or compound.id, source="chebi")))
    out = [e for _, e in sorted(named, key=lambda item: item[0])]
    # A compound name that is also a gene symbol the lexicon found ("GSH"): the compound wins in a reaction question.
    compound_names = {e.name.lower() for e in out if e.type == "compound"}
    return list({e.id: e for e in out if not (e.type == "gene" and e.name.lower() in compound_names)}.values())
