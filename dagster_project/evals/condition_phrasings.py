"""Phrasings of the generated condition questions (condition_questions.py): a condition's genes, a gene's
conditions, yes/no about a gene and a condition (linked or not), and pathway enrichment for a condition's genes."""

from __future__ import annotations

CONDITION_PHRASINGS: dict[str, tuple[str, ...]] = {
    "condition_genes": (
        "Which genes are associated with {condition}?",
        "What genes are linked to {condition}?",
        "List the genes ClinVar links to {condition}.",
        "genes associated with {condition}",
        "Which genes cause {condition}?",
        "Give me the genes implicated in {condition}.",
        "What are the genes for {condition}?",
        "Which genes does ClinVar associate with {condition}?",
    ),
    "condition_genes:count": (
        "How many genes are associated with {condition}?",
        "How many genes does ClinVar link to {condition}?",
        "how many genes are linked to {condition}",
    ),
    "gene_conditions": (
        "Which diseases is {gene} associated with?",
        "What conditions are linked to {gene}?",
        "List the conditions ClinVar associates with {gene}.",
        "Which disorders involve {gene}?",
        "What diseases are associated with {gene}?",
        "which conditions is {gene} linked to",
        "What syndromes does ClinVar link to {gene}?",
    ),
    "gene_conditions:count": (
        "How many conditions is {gene} associated with?",
        "How many diseases are linked to {gene}?",
    ),
    "association_check": (
        "Is {gene} associated with {condition}?",
        "True or false: {condition} is associated with {gene}",
        "Is {gene} linked to {condition}?",
        "Does ClinVar associate {gene} with {condition}?",
        "Is it true that {gene} is associated with {condition}?",
        "{gene} is linked to {condition}, right?",
    ),
    "association_absent": (
        "Is {gene} associated with {condition}?",
        "True or false: {condition} is associated with {gene}",
        "Is {gene} linked to {condition}?",
        "Does ClinVar associate {gene} with {condition}?",
        "Is it true that {gene} is associated with {condition}?",
        "{gene} is linked to {condition}, right?",
    ),
    "condition_enrichment": (
        "Which pathways are enriched for genes associated with {condition}?",
        "What Reactome pathways are enriched for the genes of {condition}?",
        "Pathway enrichment for the genes linked to {condition}",
        "Which pathways are over-represented among genes linked to {condition}?",
    ),
}
