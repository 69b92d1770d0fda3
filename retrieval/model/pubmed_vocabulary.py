"""What the translation check knows about PubMed's vocabulary beyond a translation itself: abbreviations that
Automatic Term Mapping leaves in [All Fields] although MeSH has a heading for what they stand for, words it maps to
the wrong sense in a given context, publication types and populations as questions name them.

Each entry is a MeSH heading (MeSH Browser, https://meshb.nlm.nih.gov) or a publication type PubMed lists
(PubMed Help, "Publication Types"). A term missing here is not refined: the check then judges the translation by
its shape alone (phrases, groups, constraints, count).
"""

from __future__ import annotations

import re

# Abbreviation (as typed, case-folded) → the MeSH heading it stands for.
ABBREVIATIONS: dict[str, str] = {
    "arbs": "angiotensin receptor antagonists",
    "arb": "angiotensin receptor antagonists",
    "ace inhibitors": "angiotensin-converting enzyme inhibitors",
    "acei": "angiotensin-converting enzyme inhibitors",
    "ssris": "selective serotonin reuptake inhibitors",
    "ssri": "selective serotonin reuptake inhibitors",
    "nsaids": "anti-inflammatory agents, non-steroidal",
    "nsaid": "anti-inflammatory agents, non-steroidal",
    "ppis": "proton pump inhibitors",
    "ppi": "proton pump inhibitors",
    "tkis": "protein kinase inhibitors",
    "tki": "protein kinase inhibitors",
    "sglt2 inhibitors": "sodium-glucose transporter 2 inhibitors",
    "sglt2i": "sodium-glucose transporter 2 inhibitors",
    "glp-1 ras": "glucagon-like peptide-1 receptor agonists",
    "glp-1ra": "glucagon-like peptide-1 receptor agonists",
    "dmards": "antirheumatic agents",
    "icis": "immune checkpoint inhibitors",
    "ici": "immune checkpoint inhibitors",
    "mabs": "antibodies, monoclonal",
    "cabg": "coronary artery bypass",
    "pci": "percutaneous coronary intervention",
    "tbi": "brain injuries, traumatic",
    "ckd": "renal insufficiency, chronic",
    "aki": "acute kidney injury",
    "nafld": "non-alcoholic fatty liver disease",
    "masld": "non-alcoholic fatty liver disease",
    "ptsd": "stress disorders, post-traumatic",
    "adhd": "attention deficit disorder with hyperactivity",
    "ibd": "inflammatory bowel diseases",
    "hcc": "carcinoma, hepatocellular",
    "nsclc": "carcinoma, non-small-cell lung",
    "aml": "leukemia, myeloid, acute",
    "cll": "leukemia, lymphocytic, chronic, b-cell",
    "emr": "electronic health records",
    "ehr": "electronic health records",
    "ehrs": "electronic health records",
    "rcts": "randomized controlled trials as topic",
    "ivf": "fertilization in vitro",
    "ecmo": "extracorporeal membrane oxygenation",
}
# Words ATM maps to a heading of another sense than the question's: word → (the heading ATM picks, [(words that
# show the other sense, the phrase to search instead)]).
WRONG_SENSE: dict[str, tuple[str, list[tuple[frozenset[str], str]]]] = {
    "cold": (
        "common cold",
        [
            (
                frozenset({"exposure", "temperature", "thermogenesis", "brown", "shock", "acclimation", "tolerance"}),
                "cold temperature",
            )
        ],
    ),
    "ms": (
        "multiple sclerosis",
        [(frozenset({"spectrometry", "proteomics", "lc", "metabolomics", "peptide", "mass"}), "mass spectrometry")],
    ),
    "aids": (
        "acquired immunodeficiency syndrome",
        [(frozenset({"hearing", "mobility", "walking", "visual"}), "hearing aids")],
    ),
    "pd": (
        "parkinson disease",
        [
            (frozenset({"dialysis", "peritoneal", "peritonitis"}), "peritoneal dialysis"),
            (frozenset({"pd-l1", "checkpoint", "pembrolizumab", "nivolumab"}), "programmed cell death 1 receptor"),
            (frozenset({"pharmacokinetics", "pk", "pharmacodynamic"}), "pharmacodynamics"),
        ],
    ),
    "ra": ("arthritis, rheumatoid", [(frozenset({"retinoic", "acid", "retinoid"}), "retinoic acid")]),
    "pe": (
        "pulmonary embolism",
        [(frozenset({"preeclampsia", "pregnancy", "eclampsia", "gestational"}), "pre-eclampsia")],
    ),
    "ad": ("alzheimer disease", [(frozenset({"atopic", "dermatitis", "eczema", "dupilumab"}), "atopic dermatitis")]),
    "mi": (
        "myocardial infarction",
        [(frozenset({"motivational", "interviewing", "counseling", "counselling"}), "motivational interviewing")],
    ),
}
# How a question names a publication type → PubMed's publication type.
PUBLICATION_TYPES: dict[str, str] = {
    "review": "Review",
    "reviews": "Review",
    "systematic review": "Systematic Review",
    "systematic reviews": "Systematic Review",
    "meta-analysis": "Meta-Analysis",
    "meta-analyses": "Meta-Analysis",
    "meta analyses": "Meta-Analysis",
    "clinical trial": "Clinical Trial",
    "clinical trials": "Clinical Trial",
    "randomized controlled trial": "Randomized Controlled Trial",
    "rcts": "Randomized Controlled Trial",
    "randomized controlled trials": "Randomized Controlled Trial",
    "rct": "Randomized Controlled Trial",
    "case report": "Case Reports",
    "case reports": "Case Reports",
    "guideline": "Guideline",
    "guidelines": "Guideline",
    "preprint": "Preprint",
    "preprints": "Preprint",
}
# How a question names a population → the MeSH heading ATM maps it to.
POPULATIONS: dict[str, str] = {
    "children": "child",
    "child": "child",
    "paediatric": "child",
    "pediatric": "child",
    "infants": "infant",
    "infant": "infant",
    "newborns": "infant, newborn",
    "adolescents": "adolescent",
    "teenagers": "adolescent",
    "adults": "adult",
    "older adults": "aged",
    "elderly": "aged",
    "women": "female",
    "men": "male",
    "pregnant women": "pregnant women",
    "mice": "mice",
    "rats": "rats",
    "humans": "humans",
    "patients": "patients",
}
_ABBREVIATION_RE = re.compile(r"^(?=.*[A-Z].*[A-Z])[A-Z0-9][A-Za-z0-9-]*$")


def looks_like_abbreviation(word: str) -> bool:
    """Two or more capitals and no spaces ("ARBs", "SGLT2i", "COPD"): what ATM most often leaves unmapped."""
    return bool(_ABBREVIATION_RE.match(word))


def expansion(term: str) -> str | None:
    return ABBREVIATIONS.get(term.strip().lower())


def meant_sense(word: str, context: set[str]) -> tuple[str, str] | None:
    """(the heading ATM wrongly picks, the phrase meant) when the context's words show another sense of `word`."""
    entry = WRONG_SENSE.get(word.lower())
    if entry is None:
        return None
    heading, senses = entry
    return next(((heading, phrase) for cues, phrase in senses if cues & context), None)
