"""Phrasings of the generated reaction questions (reaction_questions.py): a pathway's reactions, a reaction's
participants by role, the reactions of a gene or compound, walks downstream and upstream, and pathways Flux holds no
reactions for."""

from __future__ import annotations

REACTION_PHRASINGS: dict[str, tuple[str, ...]] = {
    "pathway_reactions": (
        "Which reactions does the {src} pathway '{name}' include?",
        "List the reactions of {src} {name}.",
        "What reactions make up {name}?",
        "reactions of {id}",
        "Show me the reactions in {src} {name} in order.",
        "Which reactions take place in {src} '{name}'?",
        "What are the reaction steps of {name}?",
        "Give me the reactions of {id}.",
        "Name the reactions in the {name} pathway.",
        "Which reactions belong to {src} {name}?",
        "I need the reactions of {src} {name}.",
        "{src} {name}: which reactions?",
        "Enumerate the reactions of {src} '{name}'.",
        "What reactions happen in {name}?",
        "List every reaction annotated to {id}.",
    ),
    "pathway_reactions:count": (
        "How many reactions does {src} {name} have?",
        "How many reactions are in {id}?",
        "What is the number of reactions in {src} '{name}'?",
        "how many reactions make up {name}?",
        "Count the reactions of the {src} pathway {name}.",
        "How many reactions take place in {src} {name}?",
    ),
    "reaction_scope:pathway": (
        "Which reactions does the {src} pathway '{name}' include?",
        "List the reactions of {src} {name}.",
        "How many reactions are in {id}?",
        "Which reactions does {id} include?",
        "Which reactions take place in {src} '{name}'?",
        "What are the reaction steps of {name}?",
    ),
    "reaction_scope:id": (
        "What does reaction {rid} consume?",
        "What are the inputs and outputs of {rid}?",
        "What catalyses reaction {rid}?",
        "What happens after reaction {rid}?",
    ),
    "reaction_participants:all": (
        "What are the inputs and outputs of {rid}?",
        "Describe reaction {rid}.",
        "Which participants does {rid} have?",
        "What goes in and what comes out of reaction {rid}?",
        "Tell me the participants of the reaction '{rname}'.",
        "What takes part in {rid}?",
    ),
    "reaction_participants:input": (
        "What does reaction {rid} consume?",
        "What are the inputs of {rid}?",
        "what are the substrates of {rid}",
        "What does the reaction '{rname}' consume?",
        "Which reactants does {rid} use?",
    ),
    "reaction_participants:output": (
        "What does {rid} produce?",
        "What are the products of reaction {rid}?",
        "What is produced by '{rname}'?",
        "Which outputs does the reaction {rid} have?",
    ),
    "reaction_participants:catalyst": (
        "What catalyses {rid}?",
        "Which enzyme catalyzes reaction {rid}?",
        "What is the catalyst of '{rname}'?",
    ),
    "entity_reactions:any": (
        "Which reactions involve {entity}?",
        "In which reactions does {entity} take part?",
        "What reactions is {entity} involved in?",
        "List the reactions {entity} participates in.",
        "Which Reactome reactions include {entity}?",
    ),
    "entity_reactions:input": (
        "Which reactions consume {entity}?",
        "Which reactions use {entity}?",
        "In which reactions is {entity} an input?",
        "What reactions take {entity} as a substrate?",
    ),
    "entity_reactions:output": (
        "Which reactions produce {entity}?",
        "What reactions generate {entity}?",
        "In which reactions is {entity} an output?",
        "Which reactions form {entity}?",
    ),
    "entity_reactions:catalyst": (
        "Which reactions does {entity} catalyse?",
        "What reactions are catalyzed by {entity}?",
        "Which reactions have {entity} as a catalyst?",
    ),
    "entity_reactions:count": (
        "How many reactions involve {entity}?",
        "In how many reactions does {entity} take part?",
        "How many reactions is {entity} involved in?",
    ),
    "reaction_walk:downstream": (
        "What is downstream of {start}?",
        "What happens after {start}?",
        "What lies downstream of {start}?",
        "What sits downstream of {start}?",
        "Which reactions follow {start}?",
        "What comes next after {start}?",
        "what happens next after {start}",
    ),
    "reaction_walk:upstream": (
        "What is upstream of {start}?",
        "What happens before {start}?",
        "Which reactions precede {start}?",
        "What lies upstream of {start}?",
        "What comes before {start}?",
    ),
}
