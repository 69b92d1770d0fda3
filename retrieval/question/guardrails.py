"""Input and output guardrails (docs/answers.md, steps 1 and 7), all rules, all offline.

Input: prompt injection, personal medical advice and clearly non-biology requests are refused with a message that
says why and what Flux can answer. Output: sentences that instruct the reader about dosing or treatment are
replaced, while reporting ("patients received 40 mg") passes unchanged. Logs: e-mail addresses are redacted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pysbd

from retrieval.model.answer import FinalAnswer

Category = Literal["injection", "medical_advice", "out_of_scope"]

_I = re.IGNORECASE
_SCOPE = (
    "Flux answers questions about biology: genes, proteins, pathways (Reactome, KEGG) and what the biomedical "
    "literature (PubMed, OpenAlex) reports about them."
)
MESSAGES: dict[Category, str] = {
    "injection": (
        "This request tries to change Flux's instructions or reveal its configuration, so it was not processed. "
        + _SCOPE
    ),
    "medical_advice": (
        "Flux cannot give personal medical advice, such as what you should take, stop or change. It can report "
        "what studies and pathway databases say about a drug, gene or disease; for your own treatment please ask "
        "a clinician."
    ),
    "out_of_scope": "This question is outside what Flux covers. " + _SCOPE,
}
REMOVED_SENTENCE = "[Removed: individualised dosing or treatment instructions are not given; consult a clinician.]"

_QUALIFIER = r"(?:previous|prior|above|earlier|preceding|original|initial|existing|system|developer|safety|your|all)"
INJECTION_PATTERNS = [
    # A qualifier is required: "does the cell forget the instructions encoded in DNA" is a biology question.
    re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\b(?:\W+\w+){0,3}?\W+" + _QUALIFIER + r"\b(?:\W+\w+){0,2}?\W+"
        r"(?:instructions?|rules|prompts?|guidelines|directions|messages?|context|constraints|restrictions|filters)\b",
        _I,
    ),
    re.compile(r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bsystem\s+prompt\b|\bdeveloper\s+mode\b", _I),
    re.compile(
        r"\b(?:reveal|show|print|repeat|leak|output|tell\s+me|what\s+(?:are|is|were))\b(?:\W+\w+){0,3}?\W+"
        r"(?:your|hidden|initial|original|secret|internal)\W+(?:\w+\W+)?(?:prompt|instructions|rules)\b",
        _I,
    ),
    # "act as" alone is ordinary biology ("TP53 acts as a tumour suppressor"): only role-play framings count.
    re.compile(
        r"\b(?:act|behave)\s+as\s+(?:if\s+you|though\s+you|my\b|an?\s+(?:unrestricted|unfiltered|uncensored|"
        r"different|evil|jailbroken|ai|assistant|chatbot)\b)|\bpretend\s+(?:to\s+be|you\s+are)\b|\brole-?play\b",
        _I,
    ),
    re.compile(r"\bjailbr(?:eak|oken)\b|\bdo\s+anything\s+now\b", _I),
    # Case-sensitive: the DAN family of BMP antagonists is biology; "you are DAN" is not.
    re.compile(r"\b(?:[Yy]ou\s+are|[Yy]ou're|[Aa]s|[Ee]nable|[Aa]ctivate)\s+DAN\b|\bDAN\s+mode\b"),
    re.compile(r"<\|(?:im_start|im_end|system|endoftext|assistant|user)\|>|\[/?INST\]|<</?SYS>>", _I),
    re.compile(r"^\s*#{2,}\s*(?:system|instruction|instructions|assistant)\b|^\s*system\s*:", _I | re.MULTILINE),
]

# Bare verbs are too common in research questions ("which database should I use / start with"), so a medical
# reading needs "take"-like verbs or a change to a dose or medication.
_MED_OBJECT = r"(?:doses?|dosage|medications?|meds|insulin|pills?|tablets?|treatment|prescriptions?)"
_MED_ACTION = (
    r"(?:(?:take|taking|quit)\b(?!\s+(?:into\s+account|a\s+look|note|notice))|(?:stop|start|keep)\s+taking\b"
    r"|(?:increase|decrease|reduce|lower|raise|stop|change|adjust|skip|double|halve)\s+(?:my\s+|the\s+)?"
    + _MED_OBJECT
    + r")"
)
_MEDICAL = [
    re.compile(r"\b(?:should|can|could|may|do|must)\s+i\s+(?:(?:still|also|just|safely|be)\s+)?" + _MED_ACTION, _I),
    re.compile(r"\bmy\s+" + _MED_OBJECT + r"\b", _I),
    re.compile(
        r"\b(?:dose|dosage|how\s+much|how\s+many|how\s+often)\b[^.?!]{0,60}\b(?:should|do|can|must)\s+i\s+"
        r"(?:take|use|inject|give|have|be\s+taking)\b",
        _I,
    ),
    re.compile(r"\b(?:is\s+it\s+safe|safe)\s+for\s+me\b|\bam\s+i\s+(?:safe|allowed)\s+to\b", _I),
]
_HEALTH_WORD = (
    r"(?:\w+(?:itis|emia|aemia|oma|pathy)|diabet\w*|cancer|hypertension|high\s+blood\s+pressure|pain|disease"
    r"|syndrome|disorder|infection|allerg\w*|asthma|depression|anxiety|condition|symptoms?|fever|flu|covid\w*"
    r"|headaches?|migraines?|insomnia|cholesterol|deficiency|tumou?r|lump|epilepsy|seizures?|hiv|pregnan\w*"
    r"|\w+(?:statin|pril|sartan|olol|mab|formin|azole|cillin|mycin|profen|prazole|oxetine)|insulin|aspirin"
    r"|paracetamol|acetaminophen|antibiotics?|antidepressants?|medications?|meds|pills|tablets|chemo\w*)"
)
# "I have <condition> ... what should I" is personal; "I have a dataset ... should I use DESeq2" is not.
_FIRST_PERSON_HEALTH = re.compile(
    r"\bi(?:\s+have|['\u2019]ve\s+got|\s+got|\s+(?:was|am)\s+diagnosed\s+with|['\u2019]m\s+diagnosed\s+with|\s+suffer\s+from"
    r"|(?:['\u2019]m|\s+am)\s+(?:suffering\s+from|on|taking)|\s+take)\b"
    # "I have read papers on cancer", "I have a question about diabetes" describe research, not a condition.
    r"(?!\s+(?:\w+ed|been|read|seen|found|heard|done|written|run|made|some|a\s+question|questions?)\b)"
    r"(?:\W+\w+){0,3}?\W+" + _HEALTH_WORD + r"\b|\bi(?:['\u2019]m|\s+am)\s+pregnant\b",
    _I,
)
_ASKS_WHAT_TO_DO = re.compile(
    r"\b(?:what|which|how\s+much)\b[^.?!]{0,40}\b(?:should|can|do)\s+i\b|\bshould\s+i\b|\bcan\s+i\b|\bdo\s+i\s+need\b",
    _I,
)

_OFF_TOPIC = re.compile(
    r"\bweather\b|\bforecast\b|\bwill\s+it\s+rain\b|\bsports?\b|\bfootball\b|\bsoccer\b|\bbasketball\b|\bbaseball\b"
    r"|\bcricket\s+(?:match|score)|\b(?:nba|nfl|nhl|mlb|fifa)\b|\bworld\s+cup\b|\bsuper\s+bowl\b|\bpremier\s+league\b"
    r"|\bwho\s+won\b|\bstock\s+(?:price|market|ticker)s?\b|\bshare\s+price\b|\bbitcoin\b|\bcrypto\w*|\bnasdaq\b"
    r"|\bdow\s+jones\b|\bs&p\s*500\b|\brecipes?\b|\bbak(?:e|ing)\b|\bcooking\b|\bhow\s+(?:do\s+i|to)\s+cook\b"
    r"|\b(?:write|compose|draft|make\s+up)\b(?:\W+\w+){0,3}?\W+(?:poem|story|essay|song|lyrics|limerick|haiku|joke"
    r"|novel|cover\s+letter|email|tweet)s?\b|\btell\s+me\s+a\s+joke\b|\bpython\b|\bjavascript\b|\btypescript\b"
    r"|\bjava\b|\bc\+\+|\bsql\b|\bhtml\b|\bcss\b|\bregex\b|\bsource\s+code\b|\bcode\s+(?:for|to|that)\b"
    r"|\belections?\b|\bpresident\b|\bsenators?\b|\bparliament\b|\bdemocrats?\b|\brepublicans?\b|\bvot(?:e|ing)\b"
    r"|\bprime\s+minister\b|\bpolitic\w*|\bflights?\b|\bhotels?\b|\bvacation\b|\bholiday\b|\bvisa\b|\btourist\w*"
    r"|\bitinerary\b|\btravel\w*|\bmovies?\b|\bcelebrity\b|\blottery\b",
    _I,
)
_BIOLOGY = re.compile(
    r"\b(?:genes?|genetic\w*|genom\w*|proteins?|proteom\w*|pathways?|enzym\w*|cells?|cellular|metabol\w*|diseases?"
    r"|receptors?|kinases?|phosphatases?|dna|rna|mrna|mirna|mutat\w*|variants?|alleles?|chromosom\w*|transcript\w*"
    r"|translation|express\w+|phosphorylat\w*|apoptosis|signal\w*|ligands?|antibod\w*|antigens?|immun\w*|virus\w*"
    r"|viral|bacteri\w*|microb\w*|tissues?|organs?|clinical|trials?|drugs?|doses?|dosage|therap\w*|cancers?"
    r"|tumou?rs?|oncogen\w*|diabet\w*|insulin|glucose|glycoly\w*|bio\w*|molecul\w*|amino|peptides?|fast[aq]"
    r"|lipids?|hormones?|neurons?|synap\w*|membranes?|mitochond\w*|ribosom\w*|nucle\w*|reactome|kegg|hgnc|pubmed"
    r"|openalex|uniprot|ensembl|species|evolution\w*|organisms?|sequenc\w*|crispr|knockout|mice|mouse|patients?"
    r"|syndrome|inflammat\w*|infection\w*|pharmac\w*|transporters?|channels?|substrates?|inhibit\w*|homolog\w*"
    r"|ortholog\w*|isoforms?|epigen\w*|methylat\w*|histones?|chromatin|plasmids?|stem|embryo\w*|blood|plasma"
    r"|disorders?|symptoms?|muscles?|bones?|brain|heart|liver|kidneys?|lungs?|skin|neural|vaccin\w*|pathogen\w*)\b",
    _I,
)
# Gene symbols (TP53, BRCA1, IL6: a capital, another capital and a digit), Reactome/KEGG/HGNC/GO ids, p53.
_IDENTIFIER = re.compile(
    r"\b(?=\w*\d)(?=(?:\w*[A-Z]){2})[A-Z][A-Z0-9]{1,11}\b|\bR-[A-Z]{3}-\d+\b|\b[a-z]{3}\d{5}\b|\bHGNC:\d+\b"
    r"|\bGO:\d{7}\b|\bp\d{2,3}\b"
)


@dataclass(frozen=True)
class Screening:
    allowed: bool
    category: Category | None = None
    message: str | None = None


def _refuse(category: Category) -> Screening:
    return Screening(False, category, MESSAGES[category])


def screen(question: str) -> Screening:
    """Classify a question: injection first, then personal medical advice, then clearly non-biology requests."""
    if any(p.search(question) for p in INJECTION_PATTERNS):
        return _refuse("injection")
    personal = _FIRST_PERSON_HEALTH.search(question) and _ASKS_WHAT_TO_DO.search(question)
    if personal or any(p.search(question) for p in _MEDICAL):
        return _refuse("medical_advice")
    if _OFF_TOPIC.search(question) and not (_BIOLOGY.search(question) or _IDENTIFIER.search(question)):
        return _refuse("out_of_scope")
    return Screening(True)


def screen_question(question: str) -> str | None:
    """A refusal message for the user, or None when the question may proceed."""
    return screen(question).message


# --- output ---------------------------------------------------------------------------------------------
_QUANTITY = r"\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|μg|g|ml|units?|iu|tablets?|pills?|capsules?|puffs?|drops?)\b"
_DOSING_CONTEXT = re.compile(
    _QUANTITY + r"|\b(?:doses?|dosage|medications?|medicines?|meds|drugs?|pills?|tablets?|capsules?|insulin"
    r"|prescriptions?|treatment|therapy|taking|statins?|daily|twice|once\s+a\s+day)\b",
    _I,
)
_INSTRUCTION_VERBS = (
    r"(?:take|stop|start|begin|increase|decrease|reduce|lower|raise|skip|continue|discontinue|switch|inject"
    r"|administer|give|titrate|adjust|avoid|keep)"
)
_SECOND_PERSON = re.compile(
    r"\byou(?:'d|'ll)?\s+(?:should|must|need\s+to|have\s+to|can|could|ought\s+to|may\s+want\s+to|might\s+want\s+to"
    r"|will\s+need\s+to|are\s+advised\s+to)\s+(?:(?:also|not|then|now|consider|try|first|be)\s+)*"
    + _INSTRUCTION_VERBS
    + r"\w*\b|\b(?:"
    + _INSTRUCTION_VERBS
    + r"|double|halve)\s+your\b|\byour\s+(?:dose|dosage)\s+(?:should|must)\b"
    # "We suggest that ..." in a quoted abstract is reporting; only advice aimed at the reader counts.
    r"|\b(?:i|we)\s+(?:would\s+)?(?:recommend|suggest|advise)\s+(?:that\s+)?(?:you\b|taking|starting|stopping)",
    _I,
)
# An imperative opens the sentence (after list markers or a softener); "Increase in X" / "Start of Y" are nouns.
_IMPERATIVE = re.compile(
    r"^\s*(?:[-*•]|\d+[.)])?\s*(?:(?:please|then|so|now|simply|also|first|next),?\s+)*"
    + _INSTRUCTION_VERBS
    + r"\b(?!-|\s+(?:in|of)\b)",
    _I,
)
_segmenter = pysbd.Segmenter(language="en", clean=False)


def _instructs(sentence: str) -> bool:
    if not _DOSING_CONTEXT.search(sentence):
        return False
    return bool(_SECOND_PERSON.search(sentence) or _IMPERATIVE.search(sentence))


def replace_sentences(text: str, matches: Callable[[str], bool], notice: str) -> tuple[str, int]:
    """Each sentence for which `matches` is true becomes `notice` (a run of them, one notice); (text, replaced)."""
    out: list[str] = []
    replaced = 0
    for sentence in _segmenter.segment(text):
        if not matches(sentence):
            out.append(sentence)
            continue
        replaced += 1
        trailing = sentence[len(sentence.rstrip()) :]
        if out and out[-1].rstrip() == notice:
            out[-1] = notice + trailing
        else:
            out.append(notice + trailing)
    return "".join(out), replaced


def scrub_output(text: str) -> tuple[str, list[str]]:
    """Replace sentences that instruct the reader on dosing or treatment; return (text, warnings)."""
    if not text.strip():
        return text, []
    scrubbed, removed = replace_sentences(text, _instructs, REMOVED_SENTENCE)
    if not removed:
        return text, []
    return scrubbed, [f"Removed {removed} sentence(s) giving individualised dosing or treatment instructions."]


# --- logs -----------------------------------------------------------------------------------------------
# A match starts only where a local part can start (not inside a run of its characters): without the lookbehind a
# long run with no "@" is tried from every position, quadratic in its length, on every log record.
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def redact_emails(text: str) -> str:
    return _EMAIL.sub("[email]", text)


def _redact_arg(arg: Any) -> Any:
    if arg is None or isinstance(arg, bool | int | float):
        return arg
    text = arg if isinstance(arg, str) else str(arg)
    return redact_emails(text) if _EMAIL.search(text) else arg


class EmailRedactingFilter(logging.Filter):
    """Redacts e-mail addresses from a record's message, arguments and formatted traceback; never drops records."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_emails(record.msg)
        elif record.msg is not None and _EMAIL.search(str(record.msg)):
            record.msg = redact_emails(str(record.msg))
        if isinstance(record.args, dict):
            record.args = {key: _redact_arg(value) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(arg) for arg in record.args)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_emails(record.exc_text)
        return True


_factory_installed = False


def install_log_redaction(logger_name: str | None = None) -> EmailRedactingFilter:
    """Attach the filter to a logger (root when None) and to its handlers; idempotent.

    Logger filters do not see records propagated from child loggers, and handlers added later (uvicorn's own)
    would miss a handler filter, so for the root the record factory redacts every record as it is created too.
    """
    global _factory_installed
    logger = logging.getLogger(logger_name)
    existing = [f for f in logger.filters if isinstance(f, EmailRedactingFilter)]
    redactor = existing[0] if existing else EmailRedactingFilter()
    for target in [logger, *logger.handlers]:
        if not any(isinstance(f, EmailRedactingFilter) for f in target.filters):
            target.addFilter(redactor)
    if logger_name is None and not _factory_installed:
        make_record = logging.getLogRecordFactory()

        def redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            redactor.filter(record)
            return record

        logging.setLogRecordFactory(redacting_factory)
        _factory_installed = True
    return redactor


def scrub_answer(answer: FinalAnswer) -> FinalAnswer:
    """Output guardrail: individualised dosing/treatment instructions are replaced, and claims carrying them go."""
    text, warnings = scrub_output(answer.answer)
    if not warnings:
        return answer
    kept = [c for c in answer.claims if not scrub_output(c.text)[1]]
    cited = {i for c in kept for i in c.citations}
    update: dict[str, Any] = {
        "answer": text,
        "claims": kept,
        "warnings": [*answer.warnings, *warnings],
        "citations": [c for c in answer.citations if c.id in cited],
    }
    if not kept:
        update["confidence"] = 0.0
    return answer.model_copy(update=update)
