"""`scope`: a question that asks for a kind of fact no Flux source holds — drugs, variants, expression, clinical
trials, structures, disease associations — `abstain` with the missing fact type named. (Reactions are held for some
pathways: a reaction question about others is `reaction_scope`'s.)

The answer says plainly that Flux holds no such data, names where such facts come from, and lists what Flux does
hold about the pathways and genes the question names (cited), with confidence 0 — never the nearest sentences
dressed as an answer. When the indexed literature itself states the answer, the answerer gives that literature
answer instead and keeps the `scope` field and a warning (retrieval/answerer.py).
"""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import node_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.kinds.not_found import not_found_plan
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import Holding, NodeRef, ScopeData
from retrieval.model.plan import Entity, FactType, Plan
from retrieval.question.disease_questions import ASKED_CONDITION
from retrieval.question.reading import EXPLAINS, Read, gene_entities, pathway_entities

# Checked in this order: the first fact type asked for names the answer. Each pattern matches the fact being asked
# for, not a word that merely appears ("Gene expression (Transcription)" is a pathway, read out before matching).
_ASKED: tuple[tuple[FactType, re.Pattern[str]], ...] = (
    (
        "clinical_trial",
        re.compile(
            r"\bclinical(?:ly)? (?:tr(?:ia|ai)ls?|stud\w+)|\btrials?\b|"
            r"\bphase (?:i{1,3}v?|[1-4])\b|"
            r"\bnct\d{8}\b|\brandomi[sz]ed\b",
            re.I,
        ),
    ),
    (
        "drug",
        re.compile(
            r"\bdrugs?\b|\bmedications?\b|\bmedicines?\b|\bpharmacolog\w*|\bmechanism of action\b|"
            r"\bdos(?:e|es|ing|age)\b|\bside[- ]effects?\b|\bcontraindicat\w*|\bfda\b|\bema\b|"
            r"\bapproved (?:for|to treat|drugs?)\b|\btargeted therap\w*|\btherapeutics?\b|"
            r"\binhibitors?\b|\bagonists?\b|\bantagonists?\b|\bchemotherap\w*|\bprescri\w*",
            re.I,
        ),
    ),
    (
        "variant",
        re.compile(
            r"\bvariants?\b|\brs\d{3,}\b|\bsnps?\b|\bsnvs?\b|\bpolymorphisms?\b|\balleles?\b|"
            r"\bpathogenic(?:ity)?\b|\blikely benign\b|\bvus\b|\bmissense\b|\bnonsense\b|"
            r"\bframeshift\b|\bhgvs\b|\bc\.\d+|\bp\.[a-z]{1,3}\d+|(?<![\w-])[A-Z]\d{2,4}[A-Z](?![\w-])|"
            r"\bmutations?\b.*\b(?:effect|consequence|pathogenic|frequency|prevalen\w+)",
            re.I,
        ),
    ),
    (
        "expression",
        re.compile(
            r"\bexpressed\b|\bexpression (?:levels?|patterns?|profiles?|data|atlas)\b|"
            r"\b(?:tissue|cell[- ]type)[- ]specific\b|\b(?:which|what) tissues?\b|\btissues? "
            r"(?:is|are|does)\b|\brna-?seq\b|\btranscript (?:levels?|abundance)\b|\bsingle[- ]cell\b|"
            r"\bgtex\b|\bprotein atlas\b|\b(?:tpm|fpkm)\b|\b(?:up|down)-?regulated in\b|"
            r"\bover-?expressed\b|\bhow much .+ (?:in|expressed)\b",
            re.I,
        ),
    ),
    (
        "structure",
        re.compile(
            r"\b(?:crystal|3d|three-dimensional|tertiary|quaternary|protein|atomic|cryo-?em|nmr|"
            r"x-ray) structures?\b|\bstructures? of\b|\bpdb\b|\bcryo-?em\b|\balphafold\b|\bx-ray\b|"
            r"\bbinding (?:site|pocket)s?\b|\bactive[- ]site residues?\b|\bresidues?\b|"
            r"\bfold(?:s|ing)?\b|\bconformation\w*|\batomic\b|\bamino acids?\b.*\b(?:contact|"
            r"interface|bind\w*)\b",
            re.I,
        ),
    ),
    (
        "disease_association",
        re.compile(
            r"\b(?:associat\w+|link(?:ed|s)?|caus\w+|implicated|responsible|underl\w+|"
            r"risk|predispos\w+|involved)\b.*\b(?:syndromes?|diseases?|disorders?|"
            r"cancers?|tumou?rs?|deficienc\w+|an(?:a)?emias?|dystroph\w+|conditions?)\b|"
            r"\b(?:syndromes?|diseases?|disorders?|conditions?|phenotypes?)\b.*\b(?:associat\w+|"
            r"link(?:ed|s)?|caus\w+|genes?)\b|\b(?:omim|mondo|medgen|clinvar|gwas)\b|"
            r"\bdisease genes?\b|\bwhich diseases?\b|\bwhat diseases?\b",
            re.I,
        ),
    ),
)
# Not a disease association: "Is X a disease pathway?" (a category check) and "disease" inside a pathway's name.
_DISEASE_PATHWAY = re.compile(r"\bdisease pathways?\b|\b(?:pathway|category|class) of diseases?\b", re.I)
WHERE_FROM: dict[str, str] = {
    "drug": "a drug source such as ChEMBL or DrugBank",
    "variant": "a variant source such as ClinVar's variant records or dbSNP; Flux loads only ClinVar's gene-condition "
    "table",
    "expression": "an expression atlas such as GTEx or the Human Protein Atlas",
    "clinical_trial": "a trial registry such as ClinicalTrials.gov",
    "structure": "the PDB or AlphaFold DB",
    "disease_association": "a gene-disease source such as ClinVar",
    "reaction": "Reactome's reaction-level data, which Flux holds only for some pathways",
}
LABEL: dict[str, str] = {
    "drug": "drug",
    "variant": "variant",
    "expression": "expression",
    "clinical_trial": "clinical-trial",
    "structure": "structure",
    "disease_association": "gene-disease association",
    "reaction": "reaction-level",
}


def asked_fact_type(read: Read) -> tuple[FactType, str] | None:
    """The fact type the question asks for that Flux does not hold, and the words that ask for it (in the words
    the question was written in: a typo correction never makes a fact type)."""
    rest = read.rest(read.found, as_written=True)  # a pathway's own name ("Gene expression") is not what is asked
    for fact, pattern in _ASKED:
        if fact == "disease_association" and _DISEASE_PATHWAY.search(rest):
            continue
        if match := pattern.search(rest):
            return fact, match.group(0)
    return None


def recognise(read: Read) -> Plan | None:
    asked = asked_fact_type(read)
    if asked is None:
        return None
    fact, words = asked
    if fact == "disease_association" and len(read.pathways.diseases):
        # ClinVar is loaded and no condition kind read the question: a list of records of what it names is not
        # held; anything else ("why", "how", "does … cause tumours?") is the literature's to answer or abstain on.
        if EXPLAINS.search(read.as_written or read.question) or not _LISTING.search(read.as_written or read.question):
            return None
        named = ASKED_CONDITION.search(read.as_written or read.question)
        return not_found_plan(
            read,
            "name",
            "condition",
            "no ClinVar condition or gene the question names",
            asked=named.group(1) if named else words,
        )
    about = [*pathway_entities(read.found), *gene_entities(read.named_genes)]
    return Plan(
        kind="scope",
        operation="abstain",
        scope=fact,
        subjects=about[:8],
        reason=f"asks for {LABEL[fact]} facts ('{words}'), which no Flux source holds",
    )


# A list or count of records of the missing type: "Which drugs target MAPK?", "How many reactions does glycolysis
# have?", "Which genes are associated with Lynch syndrome?".
_LISTING = re.compile(
    r"^\s*(?:which|list|name|enumerate|how many|what are (?:all )?the|give me (?:all )?the)\s+"
    r"(?:\w+\s+){0,2}?(?:reactions?|drugs?|medications?|inhibitors?|variants?|mutations?|snps?|"
    r"trials?|structures?|diseases?|conditions?|syndromes?|disorders?|tissues?|cell types?)\b|"
    r"^\s*(?:which|what|list the) genes? (?:are|is|were) (?:associated|linked|implicated)\b",
    re.I,
)


def literature_may_answer(question: str, plan: Plan) -> bool:
    """Whether a text could answer it: not a list or count of records of the missing type, which a text that
    mentions a few of them does not answer."""
    return not _LISTING.search(question)


def accepts(plan: Plan) -> bool:
    return plan.operation == "abstain" and plan.scope is not None


def holdings(entities: list[Entity], stores: Stores) -> list[Holding]:
    """What Flux holds about each gene and pathway: its HGNC record and pathways; its members, place in the
    hierarchy and counterparts."""
    out = []
    for entity in entities:
        if entity.type == "gene":
            pathways = stores.graph.pathways_with_genes([entity.id])
            gene = stores.genes.by_id(entity.id)
            name = f", {gene.name}" if gene and gene.name else ""
            out.append(
                Holding(
                    text=f"{entity.name}: its HGNC record ({entity.id}{name}) and its membership in "
                    f"{len(pathways)} pathways",
                    cites=[entity.id],
                )
            )
        elif entity.type == "pathway":
            genes, compounds = stores.graph.members([entity.id]).get(entity.id, ([], []))
            parents, children = stores.graph.hierarchy(entity.id)
            counterparts = stores.graph.mappings(entity.id)
            out.append(
                Holding(
                    text=f"{node_name(NodeRef(id=entity.id, name=entity.name, source=entity.source))}: {len(genes)} "
                    f"member genes, {len(compounds)} compounds, {len(parents)} parent and {len(children)} "
                    f"sub-pathways, {len(counterparts)} resolved counterparts",
                    cites=[entity.id],
                )
            )
    return out


def holdings_statement(found: list[Holding]) -> Statement:
    return (
        "What Flux does hold about what the question names: " + "; ".join(h.text for h in found) + ".",
        [c for h in found for c in h.cites],
    )


def facts(plan: Plan, stores: Stores) -> ScopeData:
    assert plan.scope is not None
    return ScopeData(
        missing=plan.scope,
        asked=plan.reason,
        about=[NodeRef(id=e.id, name=e.name, source=e.source) for e in plan.subjects],
        holdings=holdings(plan.subjects, stores),
    )


def statements(data: ScopeData) -> list[Statement]:
    out: list[Statement] = [
        (
            f"Flux does not hold that: it holds no {LABEL[data.missing]} data (that would come "
            f"from {WHERE_FROM[data.missing]}), so it does not answer this question.",
            [],
        )
    ]
    if data.holdings:
        out.append(holdings_statement(data.holdings))
    return out


def data_table(data: ScopeData) -> DataTable | None:
    if not data.holdings:
        return None
    return table(
        f"Not held: {LABEL[data.missing]} data; what Flux holds instead",
        ["id", "what Flux holds"],
        [[", ".join(h.cites), h.text] for h in data.holdings],
    )


def refers_to(data: ScopeData) -> Referents:
    return Referents(
        pathways=[n.id for n in data.about if n.source in ("reactome", "kegg")],
        genes=[n.name for n in data.about if n.source == "hgnc"],
    )


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The missing fact type named, and no confident answer."""
    return answer.scope == expected.get("missing") and answer.confidence < 0.5


KIND = QuestionKind(
    name="scope",
    recognisers=((35, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
    abstains=True,
)
