"""What a question names, read once: its genes and pathways (exact names, ids, fuzzy names per side of a pair),
the databases it names, and the patterns several kinds' recognisers share.

Recognisers (retrieval/kinds/) read a `Read` and return a plan or None; this module holds no kind of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from retrieval.model.genes import Gene, GeneLexicon, GeneMention
from retrieval.model.pathways import PathwayLexicon, PathwayRef
from retrieval.model.plan import Entity
from retrieval.model.spelling import canonical, canonical_words, fold

# Where a question about two pathways changes from one to the other: each side is read on its own.
SEGMENTS = re.compile(
    r"\b(?:and|but|vs\.?|versus|with|against|compared (?:to|with|against)|than|from|or|"
    r"not (?:found |present |part |also )?(?:in|of)|"
    r"absent from|missing from|that aren'?t in|between)\b|[,;:]",
    re.I,
)
COUNTERPART = re.compile(
    r"\bcorrespond|\bcounterpart|\bequivalent\b|\bmatch(es|ing)?\b|\bmaps? to\b|\bmapped\b|"
    r"\bsame as\b|\banalog(ue)?\b|\bversion of\b|\bonto\b|\bcross-?reference|\bclosest\b|"
    r"\bhomolog(ue)?\b|\bin the other database\b|\btranslate\b",
    re.I,
)
GENE_PATHWAYS = re.compile(
    r"\b(which|what) pathways?\b|\bpathways? (contain\w*|includ\w*|involv\w*|with|hold\w*|"
    r"have|has|for|of)\b|\bpathways?\b.*\b(participates?|takes? part|appears?|occurs?|found)\b|"
    r"\bin which pathways?\b|\bpart of\s*\??\s*$|\bbelongs? to\s*\??\s*$|\binvolved in\s*"
    r"\??\s*$|\bpathways?\b.*\b(contain|include|involve|hold|have)s?\b",
    re.I,
)
MEMBERS = re.compile(r"\b(genes?|members?|proteins?|participants?|compounds?|metabolites?|enzymes?)\b", re.I)
OVERVIEW = re.compile(
    r"\b(tell me (more )?about|describe|overview|summary of|summari[sz]e|info(rmation)? (on|about)|"
    r"what (do|can) (we|you) (know|tell me) about)\b|\bexplain what\b.*\b(covers?|is about|"
    r"includes?)\b",
    re.I,
)
COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount (of|the)\b|\bhow (large|big)\b|\bsize of\b", re.I)
# Why and how something works, or papers about it: the literature's question, not the tables'.
EXPLAINS = re.compile(
    r"^\s*(?:why|how (?:does|do|is|are|can|could))\b|\b(?:papers?|reviews?|literature|"
    r"publications?|articles?|studies|mechanisms?)\b|\bwhat (?:is|do we) know(?:n)?\b",
    re.I,
)
PATHWAY_WORD = re.compile(r"\bpathways?\b|\bkegg\b|\breactome\b", re.I)
DATABASE = re.compile(r"\b(kegg|reactome)\b", re.I)
YES_NO = re.compile(
    r"^\s*(?:(?:true or false|is it (?:true|correct|right) that|can you confirm(?: that)?|"
    r"confirm(?: that)?|check(?: whether| if)?|tell me (?:whether|if))\b[\s:,-]*)?"
    r"(is|are|does|do|did|can|could|has|have|was|were|would)\b",
    re.I,
)
STATEMENT = re.compile(
    r"^\s*(true or false|is it (true|correct|right) that|can you confirm|confirm that)\b|"
    r",\s*(right|correct|true)\s*\??\s*$|\b(yes or no|true or false)\s*\??\s*$",
    re.I,
)


def databases(question: str) -> list[str]:
    return [m.group(1).lower() for m in DATABASE.finditer(question)]


def single_source(question: str) -> str:
    named = set(databases(question))
    return next(iter(named)) if len(named) == 1 else ""


# "Can you describe …", "Could you list …": a request, not a yes/no question; "Is there any …": an existence
# question its kind lists ("Is there a Reactome counterpart of …?").
REQUEST = re.compile(
    r"^\s*(can|could|would|will)\s+(you|u|flux)\b(?!\s+(confirm|verify|check|tell me (whether|if)))"
    r"|^\s*(is|are)\s+there\b",
    re.I,
)


def is_yes_no(question: str) -> bool:
    """A question answered by yes or no: "Is …", "Does …", "True or false: …", "…, right?"."""
    if REQUEST.search(question):
        return False
    return bool(YES_NO.search(question) or STATEMENT.search(question))


def pathway_entity(ref: PathwayRef) -> Entity:
    return Entity(type="pathway", id=ref.id, name=ref.name, source=ref.source)


def gene_entity(gene: Gene, asked_as: str = "", matched_by: str = "") -> Entity:
    return Entity(
        type="gene",
        id=gene.hgnc_id,
        name=gene.symbol,
        source="hgnc",
        asked_as=asked_as if asked_as and asked_as != gene.symbol else "",
        matched_by=matched_by,
    )


def pathway_entities(refs: list[PathwayRef]) -> list[Entity]:
    return [pathway_entity(r) for r in refs]


def gene_entities(genes: list[Gene]) -> list[Entity]:
    return [gene_entity(g) for g in genes]


@dataclass
class Read:
    """What the question names, read once (typos in pathway names already corrected in `question`)."""

    question: str
    genes: GeneLexicon
    pathways: PathwayLexicon
    corrections: list[tuple[str, str]] = field(default_factory=list)
    as_written: str = ""  # before typo corrections
    mentions: list[GeneMention] = field(default_factory=list)
    found: list[PathwayRef] = field(default_factory=list)
    ignore: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.mentions = self.genes.find(self.question)
        self.found = self.pathways.find(self.question)
        self.ignore = frozenset(fold(m.token) for m in self.mentions)

    @classmethod
    def of(cls, question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Read:
        from retrieval.model.spelling import apply_corrections

        typos = pathways.read(question)[1]
        return cls(apply_corrections(question, typos), genes, pathways, sorted(typos.items()), question)

    @property
    def named_genes(self) -> list[Gene]:
        return [m.gene for m in self.mentions]

    def genes_outside(self, found: list[PathwayRef] | None = None) -> list[Gene]:
        """The genes named outside the pathway names the question also names ("p53" in "the p53 signaling
        pathway", "AKT" in "PIP3 activates AKT signaling" are part of a name, not genes asked about)."""
        names = [fold(p.name) for p in (self.found if found is None else found)]
        return [
            m.gene
            for m in self.mentions
            if not any(re.search(rf"(?<!\w){re.escape(fold(m.token))}(?!\w)", name) for name in names)
        ]

    @property
    def count(self) -> bool:
        return bool(COUNT.search(self.question))

    def fuzzy(self, want: int) -> list[PathwayRef]:
        return with_fuzzy(self.question, list(self.found), self.pathways, want, self.ignore)

    def rest(self, found: list[PathwayRef] | None = None, as_written: bool = False) -> str:
        """The question folded, without the pathway names and ids it was read to name (names compared word by
        word in canonical form: "MAPK1/MAPK3 signalling" is the name "MAPK1/MAPK3 signaling")."""
        words = fold(self.as_written if as_written and self.as_written else self.question).split()
        for ref in found or []:
            for name in (ref.name, ref.id):
                words = _without(words, canonical_words(name))
        return " ".join(words)


def _without(words: list[str], name: list[str]) -> list[str]:
    """`words` without the first run that reads as `name` (compared in canonical form)."""
    if not name:
        return words
    canon = [canonical(w) for w in words]
    for i in range(len(words) - len(name) + 1):
        if canon[i : i + len(name)] == name:
            return words[:i] + words[i + len(name) :]
    return words


def position(question: str, ref: PathwayRef) -> int:
    """Where the question names a pathway: its id, else the first word of its name (canonical forms)."""
    words = [canonical(w) for w in fold(question).split()]
    for token in (*canonical_words(ref.id), *canonical_words(ref.name)):
        if token in words:
            return words.index(token)
    return len(words)


def with_fuzzy(
    question: str, found: list[PathwayRef], lexicon: PathwayLexicon, want: int, ignore: frozenset[str] = frozenset()
) -> list[PathwayRef]:
    """Top up to `want` pathways: each side of the question ("A but not B", "A vs B") read on its own, exact
    names first, then by name-word coverage; then the whole question, per database it names. In question order."""
    if len(found) >= want:
        return found
    placed: list[tuple[int, PathwayRef]] = []
    for n, segment in enumerate(s for s in SEGMENTS.split(question) if s and s.strip()):
        source = single_source(segment)
        hits = lexicon.find(segment) or [r for r in [lexicon.fuzzy(segment, source, ignore=ignore)] if r]
        placed += [(n, r) for r in hits]
    ordered = [r for _, r in sorted(placed, key=lambda item: item[0])]
    merged = list({r.id: r for r in [*ordered, *found]}.values())
    if len(merged) >= want:
        return merged[: max(want, len(found))]
    for source in dict.fromkeys(databases(question) or ["reactome", "kegg"]):
        if len(merged) >= want:
            break
        if any(r.source == source for r in merged) and len(set(databases(question))) > 1:
            continue
        extra = lexicon.fuzzy(question, source, ignore=ignore)
        if extra and extra.id not in {r.id for r in merged}:
            merged.append(extra)
    return merged


_SCAFFOLD = re.compile(
    r"^(which|what|how many|how|list|name|show|give me|tell me about|the|genes?|members?|are|is|in|"
    r"of|does|do|kegg|reactome|s|connects?|links?|relates?|related|connection|between|true or "
    r"false)\s+",
    re.I,
)


def asked_phrase(rest: str) -> str:
    """The words the question used for what it asked about, without the question's own scaffolding."""
    phrase = rest
    while (shorter := _SCAFFOLD.sub("", phrase)) != phrase:
        phrase = shorter
    return re.sub(r"\s*\b(pathways?|kegg|reactome)\b\s*$", "", phrase).strip() or rest
