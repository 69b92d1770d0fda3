"""Phrasings of the generated kind questions (kind_questions.py), at least 15 per kind, and real KEGG maps that
no human pathway set holds (plants, bacteria, fungi: KEGG reference maps, named as KEGG names them)."""

from __future__ import annotations

from dagster_project.evals.condition_phrasings import CONDITION_PHRASINGS
from dagster_project.evals.reaction_phrasings import REACTION_PHRASINGS

PHRASINGS: dict[str, tuple[str, ...]] = {
    "members": (
        "Which genes belong to the {src} pathway '{name}'?", "List the member genes of {src} {name}.",
        "What genes are in the {src} pathway {name}?", "genes of {src} {name}", "Show me the genes in {src} {name}.",
        "Give me every gene annotated to {src} '{name}'.", "Which genes make up {src} {name}?",
        "What are the members of the {src} {name} pathway?", "Name the genes that take part in {src} {name}.",
        "I need the gene list for {src} {name}.", "{src} {name}: which genes?", "What genes does {id} hold?",
        "Enumerate the genes of {id}.", "Which proteins' genes are members of {src} '{name}'?",
        "Can you list the genes of the {src} {name} pathway?"),
    "members:count": (
        "How many genes are in {src} {name}?", "How many member genes does the {src} pathway '{name}' have?",
        "What is the number of genes in {src} {name}?", "how many genes does {id} contain?",
        "Count the genes of {src} {name}.", "How large is {src} {name} in genes?",
        "How many genes belong to {src} '{name}'?", "Number of genes in the {src} {name} pathway?"),
    "overview": (
        "Tell me about {src} '{name}'.", "Describe the {src} pathway {name}.", "Give me an overview of {src} {name}.",
        "Tell me about {id}.", "Summarize {src} {name} for me.", "What do you know about the {src} {name} pathway?",
        "Overview of {src} {name}, please.", "Tell me more about the {src} pathway '{name}'.",
        "Describe {id}.", "Information on {src} {name}?", "Give an overview of the {src} '{name}' pathway.",
        "Summarise what the index holds on {src} {name}.", "What can you tell me about {src} {name}?",
        "Describe {src} '{name}' briefly.", "Tell me about the {name} pathway in {src}."),
    "hierarchy:up": (
        "What is {src} '{name}' part of?", "Which larger pathway contains {src} {name}?",
        "What does {src} {name} belong to?", "Which parent pathway does {src} {name} have?",
        "Where does {src} '{name}' sit in the hierarchy?", "What are the parents of {id}?",
        "Which broader pathway is {src} {name} nested in?", "{src} {name} is part of which pathway?"),
    "hierarchy:down": (
        "What are the sub-pathways of {src} '{name}'?", "Which sub-pathways does {src} {name} have?",
        "What is under {src} {name}?", "Which pathways fall under {src} '{name}'?",
        "List the child pathways of {id}.", "What pathways are nested under {src} {name}?",
        "Into what is {src} {name} broken down?", "Show the children of {src} '{name}'."),
    "hierarchy:count": (
        "How many sub-pathways does {src} {name} have?", "How many child pathways are under {src} '{name}'?",
        "What is the number of sub-pathways of {id}?", "Count the pathways that fall under {src} {name}."),
    "gene_pathways": (
        "Which pathways contain {gene}?", "In which pathways does {gene} take part?", "What pathways is {gene} in?",
        "Which pathways does {gene} belong to?", "List the pathways that include {gene}.",
        "What is {gene} involved in?", "pathways with {gene}", "Show every pathway holding {gene}.",
        "In what pathways can {gene} be found?", "Which KEGG or Reactome pathways have {gene} as a member?",
        "Where does {gene} appear among the pathways?", "Name the pathways that {gene} participates in.",
        "{gene}: which pathways?", "Give me the pathways containing the gene {gene}.",
        "What pathways include {gene}?"),
    "gene_pathways:count": (
        "How many {src} pathways contain {gene}?", "In how many {src} pathways does {gene} occur?",
        "How many {src} pathways is {gene} part of?", "Number of {src} pathways with {gene}?",
        "Count the {src} pathways that include {gene}.", "how many {src} pathways include {gene}?"),
    "gene_facts:symbol": (
        "What is the official symbol of {alias}?", "{alias} is also known as what?",
        "What is the approved HGNC symbol for {alias}?", "Which gene is {alias}?",
        "What's the current gene symbol for {alias}?", "Give me the official gene symbol behind {alias}.",
        "Convert {alias} to an HGNC symbol.", "{alias} — official symbol?"),
    "gene_facts:ensembl": (
        "Convert {ensembl} to a gene symbol.", "Which gene is {ensembl}?", "What symbol does {ensembl} map to?",
        "Map {ensembl} to its HGNC symbol.", "What is the gene symbol of {ensembl}?"),
    "gene_facts:ids": (
        "What are the UniProt and Entrez ids of {gene}?", "Give me the identifiers of {gene}.",
        "What is the Ensembl id of {gene}?", "List the database ids for {gene}.",
        "Which UniProt accession does {gene} have?", "What is the Entrez Gene id for {gene}?",
        "{gene} identifiers?", "Cross-references for {gene}, please."),
    "gene_facts:locus_type": (
        "Is {gene} protein-coding?", "Is {gene} a protein coding gene?", "What kind of gene is {gene}?",
        "Does {gene} code for a protein?", "What is the locus type of {gene}?", "Is {gene} a non-coding gene?",
        "What type of gene is {gene}?", "Is {gene} a pseudogene?"),
    "gene_facts:location": (
        "Which chromosome is {gene} on?", "Where is {gene} located?", "What is the chromosomal location of {gene}?",
        "On which chromosome does {gene} lie?", "What is the cytoband of {gene}?",
        "Give me the genomic location of {gene}.", "{gene}: which chromosome?", "Where does {gene} map?"),
    "counterpart": (
        "Which {dst} pathway corresponds to {src}'s {name}?", "What is the {dst} counterpart of {src} '{name}'?",
        "Which {dst} pathway is equivalent to {src} {name}?", "What does {src} {name} map to in {dst}?",
        "Find the {dst} equivalent of {id}.", "Which {dst} pathway matches {src} '{name}'?",
        "Is there a {dst} pathway equivalent to {src} {name}?", "{src} {name} in {dst}: which pathway corresponds?",
        "What {dst} pathway is the same as {src} {name}?", "Which {dst} pathway is mapped to {id}?",
        "Give me the {dst} counterpart for {src} {name}.", "What is {id}'s counterpart in {dst}?",
        "Which pathway in {dst} corresponds to the {src} pathway {name}?",
        "Match {src} '{name}' to a {dst} pathway.", "What's the {dst} match for {src} {name}?"),
    "shared_genes": (
        "Which genes do {src_a} '{a}' and {src_b} '{b}' share?",
        "What genes do the {src_a} pathway '{a}' and the {src_b} pathway '{b}' have in common?",
        "Genes in both {src_a} {a} and {src_b} {b}?", "List the overlap between {src_a} {a} and {src_b} {b}.",
        "Which genes are common to {src_a} '{a}' and {src_b} '{b}'?",
        "What is the intersection of {src_a} {a} and {src_b} {b}?", "Shared genes of {src_a} {a} and {src_b} {b}",
        "Which genes appear in both {src_a} '{a}' and {src_b} '{b}'?",
        "How do the gene sets of {src_a} {a} and {src_b} {b} overlap?",
        "Give me the genes that {src_a} {a} shares with {src_b} {b}.",
        "What genes overlap between {src_a} '{a}' and {src_b} '{b}'?",
        "Which genes are in {src_a} {a} and also in {src_b} {b}, i.e. shared?",
        "Find the genes shared by {src_a} '{a}' and {src_b} '{b}'.",
        "{src_a} {a} vs {src_b} {b}: which genes do they share?",
        "What do {src_a} {a} and {src_b} {b} have in common gene-wise?"),
    "difference": (
        "Which genes are in {src_a} '{a}' but not in {src_b} '{b}'?", "Genes unique to {src_a} {a} relative to "
        "{src_b} {b}?", "List the {src_a} {a} genes that are missing from {src_b} '{b}'.",
        "What genes of {src_a} {a} are absent from {src_b} {b}?", "Genes of {src_a} '{a}' not found in {src_b} '{b}'",
        "Which {src_a} {a} genes are not part of {src_b} {b}?", "{src_a} {a} minus {src_b} {b}: which genes?",
        "Give me the genes in {src_a} {a} excluding those in {src_b} {b}.",
        "Which genes does {src_a} '{a}' have that are not in {src_b} '{b}'?",
        "Show genes only in {src_a} {a}, not in {src_b} {b}.", "Members of {src_a} {a} that aren't in {src_b} {b}?",
        "What genes are in {src_a} {a} and not in {src_b} {b}?", "Which genes are in {src_a} '{a}' except those in "
        "{src_b} '{b}'?", "List genes of {src_a} {a} lacking in {src_b} {b}.",
        "Find the {src_a} {a} genes that {src_b} {b} does not contain, i.e. not in {src_b} {b}."),
    "compare": (
        "Compare {src_a} '{a}' and {src_b} '{b}'.", "How does {src_a} '{a}' differ from {src_b} '{b}'?",
        "{src_a} {a} versus {src_b} {b}", "What is the difference between {src_a} {a} and {src_b} {b}?",
        "Give me a comparison of {src_a} '{a}' with {src_b} '{b}'.", "{src_a} {a} vs. {src_b} {b}?",
        "Compare the gene content of {src_a} {a} and {src_b} {b}.", "How do {src_a} {a} and {src_b} {b} differ?"),
    "compound_pathways": (
        "Which pathways use {compound}?", "In which pathways does {compound} occur?",
        "What pathways contain the compound {compound}?", "pathways with {compound}",
        "List the pathways that involve {compound}.", "Where is {compound} used among the pathways?",
        "Which pathways include the metabolite {compound}?", "Show pathways holding {compound}.",
        "What pathways is {compound} part of?", "{compound}: which pathways?",
        "Give me every pathway with compound {compound}.", "Which pathways have {compound} as a member?",
        "Find pathways containing {compound}.", "In what pathways can {compound} be found?",
        "Name the pathways in which {compound} takes part."),
    "compound_pathways:count": (
        "How many pathways contain {compound}?", "In how many pathways does {compound} occur?",
        "Number of pathways with {compound}?", "Count the pathways that include {compound}."),
    "check:part_of": (
        "Is {src_a} '{a}' part of {src_b} '{b}'?", "Does {src_a} {a} fall under {src_b} {b}?",
        "Is {src_a} {a} a sub-pathway of {src_b} {b}?", "True or false: {src_a} {a} is part of {src_b} {b}.",
        "Does {src_b} {b} contain {src_a} {a}?", "Is {src_a} '{a}' nested under {src_b} '{b}'?",
        "Is {src_a} {a} within {src_b} {b}?", "{src_a} {a} belongs to {src_b} {b}, right?"),
    "check:member": (
        "Is {gene} in {src} '{name}'?", "Is {gene} a member of the {src} {name} pathway?",
        "Does {src} {name} include {gene}?", "True or false: {gene} is part of {src} {name}.",
        "Does the {src} pathway '{name}' contain {gene}?", "Is {gene} one of the genes of {src} {name}?",
        "Can you confirm that {gene} belongs to {src} {name}?", "{gene} is in {src} {name}, correct?"),
    "connection": (
        "What connects {src_a} '{a}' and {src_b} '{b}'?", "How are {src_a} {a} and {src_b} {b} related?",
        "What links {src_a} {a} to {src_b} {b}?", "What is the connection between {src_a} '{a}' and {src_b} '{b}'?",
        "How is {src_a} {a} related to {src_b} {b}?", "What ties {src_a} {a} and {src_b} {b} together?",
        "Relationship between {src_a} {a} and {src_b} {b}?", "What is the link between {src_a} {a} and {src_b} {b}?"),
    "connection:genes": (
        "What connects {gene_a} and {gene_b}?", "How are {gene_a} and {gene_b} related?",
        "What links {gene_a} to {gene_b}?", "What is the connection between {gene_a} and {gene_b}?",
        "How is {gene_a} related to {gene_b}?", "Relationship between {gene_a} and {gene_b}?",
        "What ties {gene_a} and {gene_b} together?"),
    "not_found:members": (
        "Which genes are in the KEGG pathway '{name}'?", "List the genes of KEGG {name}.",
        "What genes belong to the {name} pathway?", "How many genes are in KEGG {name}?"),
    "not_found:overview": ("Tell me about KEGG '{name}'.", "Describe the {name} pathway."),
    "not_found:hierarchy": ("What is KEGG {name} part of?", "What are the sub-pathways of {name}?"),
    "not_found:map_id": ("Which genes are in {map_id}?", "Tell me about {map_id}.",
                         "How many genes does {map_id} have?"),
    "not_found:species_id": ("What genes are in {species_id}?", "Describe {species_id}."),
    "not_found:gene": ("What is the official symbol of {gene}?", "Which chromosome is {gene} on?",
                       "Is {gene} protein-coding?"),
    "not_found:ensembl": ("Convert {ensembl} to a gene symbol.", "Which gene is {ensembl}?"),
    "not_found:scrambled": ("Which genes are in the Reactome pathway '{scrambled}'?",
                            "Tell me about the KEGG {scrambled} pathway."),
    **REACTION_PHRASINGS,
    **CONDITION_PHRASINGS,
}

# KEGG reference maps of plants, bacteria and fungi (https://www.kegg.jp/kegg/pathway.html): no hsa version.
NOT_IN_INDEX_MAPS: tuple[tuple[str, str], ...] = (
    ("map00195", "Photosynthesis"), ("map00196", "Photosynthesis - antenna proteins"),
    ("map00710", "Carbon fixation in photosynthetic organisms"), ("map04075", "Plant hormone signal transduction"),
    ("map04626", "Plant-pathogen interaction"), ("map00941", "Flavonoid biosynthesis"),
    ("map02030", "Bacterial chemotaxis"), ("map02040", "Flagellar assembly"), ("map02020", "Two-component system"),
    ("map00908", "Zeatin biosynthesis"), ("map00905", "Brassinosteroid biosynthesis"),
    ("map00906", "Carotenoid biosynthesis"), ("map00521", "Streptomycin biosynthesis"),
    ("map00311", "Penicillin and cephalosporin biosynthesis"), ("map02024", "Quorum sensing"),
    ("map00073", "Cutin, suberine and wax biosynthesis"), ("map00966", "Glucosinolate biosynthesis"),
    ("map00943", "Isoflavonoid biosynthesis"), ("map04016", "MAPK signaling pathway - plant"),
    ("map04011", "MAPK signaling pathway - yeast"), ("map04111", "Cell cycle - yeast"),
    ("map04112", "Cell cycle - Caulobacter"), ("map04113", "Meiosis - yeast"),
)
