"""What kind of question is this, and about which pathways, genes and compounds? (Rules; the router's first step.)

Kinds answered from the graph: `members` (genes of a pathway), `gene_pathways` (pathways holding given genes),
`counterpart` (a pathway's match in the other database), `shared_genes` (genes two pathways share), `difference`
(genes of one pathway the other lacks), `compare` (two pathways or two genes side by side), `hierarchy` (parents
and sub-pathways), `compound_pathways` (pathways holding a compound), `overview` ("tell me about" a pathway).
Answered from the HGNC table: `gene_facts` (official symbol, identifiers, locus type, chromosome band); from
the release history: `release_changes` (what a pathway's latest release changed). `count`
marks a "how many" question of any of these. `not_found`: the question asks one of these about a pathway, gene or
id the index does not hold; the answer says so and names the closest ones, never another pathway's facts as the
one asked. Everything else is `literature`, answered from text evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from retrieval.model.genes import Gene, GeneLexicon
from retrieval.model.pathways import PathwayLexicon, PathwayRef
from retrieval.model.spelling import apply_corrections, fold
from retrieval.question.gene_questions import asked_fact, candidates, named_gene, unknown_gene_tokens
from retrieval.question.release_questions import asks_release_change

Kind = Literal["members", "gene_pathways", "counterpart", "shared_genes", "difference", "compare", "hierarchy",
               "compound_pathways", "overview", "gene_facts", "release_changes", "not_found", "literature"]
GRAPH_KINDS: tuple[Kind, ...] = ("members", "gene_pathways", "counterpart", "shared_genes", "difference", "compare",
                                 "hierarchy", "compound_pathways", "overview")
TABLE_KINDS: tuple[Kind, ...] = ("gene_facts", "release_changes", "not_found")  # answered without the graph
TYPED_KINDS: tuple[Kind, ...] = GRAPH_KINDS + TABLE_KINDS

_COMPARE = re.compile(r"\bcompare\b|\bcomparison\b|\bvs\.?(?=\s)|\bversus\b|\bdiffer|\bdifference|\bcontrast\b|"
                      r"\bside by side\b", re.I)
# Where a question about two pathways changes from one to the other: each side is read on its own.
_SEGMENTS = re.compile(r"\b(?:and|but|vs\.?|versus|with|against|compared (?:to|with|against)|than|from|or|"
                       r"not (?:found |present |part |also )?(?:in|of)|"
                       r"absent from|missing from|that aren'?t in|between)\b|[,;:]", re.I)
_SHARED = re.compile(r"\bshare[ds]?\b|\bcommon\b|\boverlap|\bin both\b|\bintersection\b", re.I)
_DIFFERENCE = re.compile(r"\bbut not\b|\band not\b|\bnot (in|found in|part of|present in|shared with|also in)\b|"
                         r"\bhave that\b.*\b(doesn'?t|does not|lacks?)\b|"
                         r"\bexcept (those |the ones )?(in|of)\b|\bexcluding\b|\bunique to\b|\bmissing (from|in)\b|"
                         r"\babsent (from|in)\b|\blacking in\b|\bminus\b|\bthat are not\b|\bthat aren'?t\b", re.I)
_COUNTERPART = re.compile(r"\bcorrespond|\bcounterpart|\bequivalent\b|\bmatch(es|ing)?\b|\bmaps? to\b|\bmapped\b|"
                          r"\bsame as\b|\banalog(ue)?\b|\bversion of\b|\bonto\b|\bcross-?reference|\bclosest\b|"
                          r"\bhomolog(ue)?\b|\bin the other database\b|\btranslate\b", re.I)
_CHILDREN = re.compile(r"\bsub-?pathways?\b|\bchild(ren)?( pathways?)?\b|\b(is|are|falls?|sits?|comes?|lies?|listed|"
                       r"found|nested) (directly )?(under|below|beneath|underneath)\b|\bwhat('s| is)( directly)? "
                       r"(under|below|beneath|underneath)\b|\bdescendants?\b|"
                       r"\bbroken (down )?into\b|\bbroken down\b|\bsubdivided\b|\bbranches\b", re.I)
_PARENTS = re.compile(r"\bparent( pathways?)?\b|\bparents\b|\bpart of which\b|\bwhich (larger|parent|broader|higher)\b|"
                      r"\bancestors?\b|\bpart of( in (kegg|reactome))?\s*[?.]*\s*$|"
                      r"\bbelongs? to\s*\??\s*$|\bcontained in\s*\??\s*$|\bnested (in|under)\s*"
                      r"\??\s*$|\bwhere does .+ (sit|fall|belong)\b|\babove\b|\bsuper-?pathways?\b", re.I)
_GENE_PATHWAYS = re.compile(r"\b(which|what) pathways?\b|\bpathways? (contain\w*|includ\w*|involv\w*|with|hold\w*|"
                            r"have|has|for|of)\b|\bpathways?\b.*\b(participates?|takes? part|appears?|occurs?|found)\b|"
                            r"\bin which pathways?\b|\bpart of\s*\??\s*$|\bbelongs? to\s*\??\s*$|\binvolved in\s*"
                            r"\??\s*$|\bpathways?\b.*\b(contain|include|involve|hold|have)s?\b", re.I)
_MEMBERS = re.compile(r"\b(genes?|members?|proteins?|participants?|compounds?|metabolites?)\b", re.I)
_ASKS = re.compile(r"\b(which|what|list|name|show|how many|how large|how big|number of|give|enumerate|count)\b|"
                   r"^\s*(genes?|members?)\b", re.I)
_YES_NO = re.compile(r"^\s*(is|are|does|do|can)\b.*\b(in|part of|members? of|belongs? to|contains?|includes?|"
                     r"participates? in|involved in)\b", re.I)
_COMPOUNDS = re.compile(r"\b(compounds?|metabolites?)\b", re.I)
_COMPOUND_ID = re.compile(r"(?<![\w:])(C\d{5})(?!\w)|\bCHEBI[:\s]\s?(\d+)\b", re.I)
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount (of|the)\b|\bhow (large|big)\b|\bsize of\b", re.I)
_OVERVIEW = re.compile(r"\b(tell me (more )?about|describe|overview|summary of|summari[sz]e|info(rmation)? (on|about)|"
                       r"what (do|can) (we|you) (know|tell me) about)\b|\bexplain what\b.*\b(covers?|is about|"
                       r"includes?)\b", re.I)
_LIST_ASKED = re.compile(r"\b(genes|members|compounds|proteins)\s+(of|in)\b|\bhow many\b", re.I)
_PATHWAY_WORD = re.compile(r"\bpathways?\b|\bkegg\b|\breactome\b", re.I)
_DATABASE = re.compile(r"\b(kegg|reactome)\b", re.I)
# Pathway ids of other species or KEGG reference maps (map00195, ath04075, R-MMU-…): never in the human index.
# Also ids of the wrong shape (hsa0411): written as an id, so never read as a name.
_FOREIGN_ID = re.compile(r"(?<![\w-])((?!ensg)[a-z]{3,4}\d{3,}|[Rr]-[A-Za-z]{3}-\d+)(?![\w-])")
_SPECIES = re.compile(r"\b(plants?|yeasts?|bacteri(a|al|um)|fung(i|al|us)|arabidopsis|caulobacter|e\. ?coli|"
                      r"escherichia|drosophila|zebrafish|mouse|mice|murine|rat|c\. ?elegans|archaea)\b", re.I)
# "Which genes of glycolysis are kinases?": a filter on the member genes' names.
_NAME_FILTER = re.compile(r"\b(?:are|is)\s+(?:an?\s+)?([A-Za-z][A-Za-z-]{3,})\s*\??\s*$", re.I)


@dataclass(frozen=True)
class Intent:
    kind: Kind
    reason: str
    pathways: tuple[PathwayRef, ...] = ()
    genes: tuple[Gene, ...] = ()
    target_source: str = ""  # counterpart and members asked of the other database; gene/compound pathways: a filter
    unresolved: tuple[str, ...] = field(default=())  # what a graph kind needed and could not find
    compounds: bool = False  # members: the question asks for compounds, not genes
    name_filter: str = ""  # members: only genes whose name contains this ("kinase")
    count: bool = False  # "how many"
    direction: str = "both"  # hierarchy: up (parents), down (sub-pathways) or both
    compound_ids: tuple[str, ...] = ()  # compound_pathways: C00022, CHEBI:15361
    fact: str = ""  # gene_facts: symbol | ids | locus_type | location | summary
    asked_as: str = ""  # gene_facts: how the gene was named; not_found: what was not found
    matched_by: str = ""  # gene_facts: symbol, alias, HGNC id …
    missing: str = ""  # not_found: pathway | gene | identifier | compound
    closest: tuple[PathwayRef, ...] = ()  # not_found: the nearest names the index holds
    corrections: tuple[tuple[str, str], ...] = ()  # typos read as pathway-name words

    @property
    def names(self) -> tuple[str, ...]:
        """The pathway names and gene symbols the question was read to name."""
        return tuple(p.name for p in self.pathways) + tuple(g.symbol for g in self.genes)


def _databases(question: str) -> list[str]:
    return [m.group(1).lower() for m in _DATABASE.finditer(question)]


def _with_fuzzy(question: str, found: list[PathwayRef], lexicon: PathwayLexicon, want: int,
                ignore: frozenset[str] = frozenset()) -> list[PathwayRef]:
    """Top up to `want` pathways: each side of the question ("A but not B", "A vs B") read on its own, exact
    names first, then by name-word coverage; then the whole question, per database it names. In question order."""
    if len(found) >= want:
        return found
    placed: list[tuple[int, PathwayRef]] = []
    for n, segment in enumerate(s for s in _SEGMENTS.split(question) if s and s.strip()):
        source = _single_source(segment)
        hits = lexicon.find(segment) or [r for r in [lexicon.fuzzy(segment, source, ignore=ignore)] if r]
        placed += [(n, r) for r in hits]
    ordered = [r for _, r in sorted(placed, key=lambda item: item[0])]
    merged = list({r.id: r for r in [*ordered, *found]}.values())
    if len(merged) >= want:
        return merged[:max(want, len(found))]
    for source in dict.fromkeys(_databases(question) or ["reactome", "kegg"]):
        if len(merged) >= want:
            break
        if any(r.source == source for r in merged) and len(set(_databases(question))) > 1:
            continue
        extra = lexicon.fuzzy(question, source, ignore=ignore)
        if extra and extra.id not in {r.id for r in merged}:
            merged.append(extra)
    return merged


def _single_source(question: str) -> str:
    named = set(_databases(question))
    return next(iter(named)) if len(named) == 1 else ""


def _counterpart(question: str, found: list[PathwayRef], genes: list[Gene]) -> Intent:
    named = _databases(question)
    # "Which Reactome pathway … the KEGG apoptosis pathway?": the pathway asked about is in the last-named one.
    source = named[-1] if named else ""
    pick = next((r for r in found if r.source == source), found[0])
    target = "kegg" if pick.source == "reactome" else "reactome"
    return Intent("counterpart", f"counterpart of {pick.id} in {target}", (pick,), tuple(genes), target)


@dataclass
class _Read:
    """What the question names, read once."""

    question: str
    genes: GeneLexicon
    pathways: PathwayLexicon
    mentions: list = field(default_factory=list)
    found: list[PathwayRef] = field(default_factory=list)
    ignore: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.mentions = self.genes.find(self.question)
        self.found = self.pathways.find(self.question)
        self.ignore = frozenset(fold(m.token) for m in self.mentions)

    @property
    def named_genes(self) -> list[Gene]:
        return [m.gene for m in self.mentions]

    def fuzzy(self, want: int) -> list[PathwayRef]:
        return _with_fuzzy(self.question, list(self.found), self.pathways, want, self.ignore)


def classify(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Intent:
    found_typos = pathways.read(question)[1]
    corrections = tuple(sorted(found_typos.items()))
    question = apply_corrections(question, found_typos)  # the rules below read the corrected words
    read = _Read(question, genes, pathways)
    count = bool(_COUNT.search(question))
    for rule in (_foreign_ids, _other_species, _release_changes, _gene_facts, _compound_pathways, _difference,
                 _shared, _compare, _hierarchy, _counterpart_rule, _membership, _gene_pathways, _unknown_gene,
                 _overview, _members):
        intent = rule(read, count)
        if intent is not None:
            return replace(intent, count=count or intent.count, corrections=corrections)
    if count and not read.mentions:
        return _not_found(read, "pathway", "count", "a count question needs a pathway, gene or compound")
    return Intent("literature", "no graph question recognised", tuple(read.found), tuple(read.named_genes))


def _foreign_ids(read: _Read, count: bool) -> Intent | None:
    unknown = [i for i in _FOREIGN_ID.findall(read.question)
               if (i.upper() if i[:2].upper() == "R-" else i) not in read.pathways.by_id]
    if not unknown:
        return None
    return _not_found(read, "identifier", "", f"pathway id {', '.join(unknown)} is not in the human index (a "
                      "human Reactome id is R-HSA-<digits>, a human KEGG one hsa<5 digits>)",
                      asked=", ".join(unknown))


def _other_species(read: _Read, count: bool) -> Intent | None:
    """"MAPK signaling pathway - plant", "Cell cycle - yeast": a pathway of another organism, which the human
    index does not hold even where a human pathway has the same name."""
    named = _SPECIES.search(read.question)
    if not named or not (_PATHWAY_WORD.search(read.question) or read.found or _MEMBERS.search(read.question)):
        return None
    return _not_found(read, "pathway", "", f"Flux holds human pathways; the question asks about {named.group(0)}",
                      asked=_asked_phrase(fold(read.question)))


def _release_changes(read: _Read, count: bool) -> Intent | None:
    found = read.found or read.fuzzy(1)
    if not found or not asks_release_change(read.question):
        return None
    source = _single_source(read.question)
    chosen = next((p for p in found if p.source == source), found[0])
    return Intent("release_changes", f"what the latest release changed in {chosen.id}", (chosen,))


def _gene_facts(read: _Read, count: bool) -> Intent | None:
    fact = asked_fact(read.question)
    if fact is None or read.found or _GENE_PATHWAYS.search(read.question) or _PATHWAY_WORD.search(read.question):
        return None
    ids = read.genes.identifiers_in(read.question)
    unknown_ids = [ident for _, ident in ids if read.genes.by_id(ident) is None]
    if not read.mentions:
        loose, word = named_gene(read.question, read.genes)
        if loose is not None:
            read.mentions = [loose]
    if not read.mentions:
        unknown = unknown_ids or unknown_gene_tokens(read.question, read.genes) or ([word] if word else [])
        if not unknown:
            return None
        what = "identifier" if unknown_ids else "gene"
        return _not_found(read, what, "gene_facts", f"no gene {', '.join(unknown)} in the HGNC table",
                          asked=", ".join(u.removeprefix("ENTREZ:") for u in unknown))
    mention = read.mentions[0]
    return Intent("gene_facts", f"{fact} of {mention.gene.symbol} (named as {mention.via} {mention.token})",
                  genes=candidates(mention), fact=fact, asked_as=mention.token, matched_by=mention.via)


def _compound_pathways(read: _Read, count: bool) -> Intent | None:
    ids = [f"CHEBI:{chebi}" if chebi else kegg.upper() for kegg, chebi in _COMPOUND_ID.findall(read.question)]
    if not ids:
        return None
    return Intent("compound_pathways", f"pathways holding {', '.join(ids)}", compound_ids=tuple(dict.fromkeys(ids)),
                  target_source=_single_source(read.question))


def _difference(read: _Read, count: bool) -> Intent | None:
    if not _DIFFERENCE.search(read.question):
        return None
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Intent("difference", f"genes of {two[0].id} that {two[1].id} lacks", tuple(two[:2]))
    return _unresolved(read, "difference", "two pathways", two)


def _compare(read: _Read, count: bool) -> Intent | None:
    if not _COMPARE.search(read.question):
        return None
    if len(read.named_genes) >= 2 and not read.found:
        return Intent("compare", "two genes compared", genes=tuple(read.named_genes[:2]))
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Intent("compare", "two pathways compared", tuple(two[:2]))
    return _unresolved(read, "compare", "two pathways or two genes", two)


def _shared(read: _Read, count: bool) -> Intent | None:
    question = read.question
    counterpart_asked = bool(_COUNTERPART.search(question) and _databases(question))
    explicit_compare = re.search(r"\bcompare|\bdiffer", question, re.I)
    if not _SHARED.search(question) or (read.named_genes and not read.found) or explicit_compare:
        return None
    two = read.fuzzy(2)
    if len(two) >= 2:
        return Intent("shared_genes", "genes shared by two pathways", tuple(two[:2]))
    missing = {"reactome", "kegg"} - {r.source for r in two}
    if len(two) == 1 and len(missing) == 1 and len(set(_databases(question))) == 2 and not counterpart_asked:
        # "the Reactome and KEGG citric acid cycle pathways": the one found, and its resolved counterpart.
        other = missing.pop()
        return Intent("shared_genes", f"genes shared by {two[0].id} and its {other} counterpart", (two[0],),
                      target_source=other)
    if counterpart_asked:  # "which KEGG pathway corresponds …, and which genes do they share?" goes on
        return None
    return _unresolved(read, "shared_genes", "two pathways", two)


def _hierarchy(read: _Read, count: bool) -> Intent | None:
    down, up = bool(_CHILDREN.search(read.question)), bool(_PARENTS.search(read.question))
    if not (down or up) or (read.named_genes and not read.found and not down):
        return None  # "Which pathways does TP53 belong to?" asks for the gene's pathways
    found = read.found or read.fuzzy(1)
    direction = "both" if down == up else "down" if down else "up"
    if found:
        return Intent("hierarchy", f"{'sub-pathways' if direction == 'down' else 'parents'} of {found[0].id}",
                      (found[0],), direction=direction)
    return _unresolved(read, "hierarchy", "a pathway")


def _counterpart_rule(read: _Read, count: bool) -> Intent | None:
    if not (_COUNTERPART.search(read.question) and _databases(read.question)):
        return None
    # The database named may be the one asked for, not the pathway's own: any database's name counts.
    found = read.found or read.fuzzy(1)
    if not found and (anywhere := read.pathways.fuzzy(read.question, ignore=read.ignore)):
        found = [anywhere]
    if found:
        return _counterpart(read.question, found, read.named_genes)
    return _unresolved(read, "counterpart", "a pathway")


def _membership(read: _Read, count: bool) -> Intent | None:
    """"Is TP53 in the apoptosis pathway?": the pathway's members, checked for the genes named."""
    if not (read.named_genes and read.found and _YES_NO.search(read.question)):
        return None
    symbols = ", ".join(g.symbol for g in read.named_genes)
    return Intent("members", f"is {symbols} a member of {read.found[0].id}", (read.found[0],),
                  genes=tuple(read.named_genes))


def _gene_pathways(read: _Read, count: bool) -> Intent | None:
    asked = _GENE_PATHWAYS.search(read.question) or count or _PATHWAY_WORD.search(read.question)
    if not read.named_genes or read.found or not asked:
        return None
    if _OVERVIEW.search(read.question) and not re.search(r"\bpathways\b|\b(which|what) pathway", read.question, re.I):
        return None  # "Tell me about the KEGG p53 … pathway": a pathway's name, not the gene's pathways
    symbols = ", ".join(g.symbol for g in read.named_genes)
    return Intent("gene_pathways", f"pathways holding {symbols}", genes=tuple(read.named_genes),
                  target_source=_single_source(read.question))


def _unknown_gene(read: _Read, count: bool) -> Intent | None:
    """"Which pathways contain ZZZ9?": a gene-shaped name the index does not hold."""
    if read.named_genes or read.found or not _GENE_PATHWAYS.search(read.question):
        return None
    unknown = unknown_gene_tokens(read.question, read.genes)
    if not unknown:
        return None
    return _not_found(read, "gene", "gene_pathways", f"no gene {', '.join(unknown)} in the index",
                      asked=", ".join(unknown))


def _members(read: _Read, count: bool) -> Intent | None:
    question = read.question
    if not (_MEMBERS.search(question) and _ASKS.search(question)):
        return None
    found = read.found or read.fuzzy(1)
    if not found:
        # Without "pathway" or a database named, "Which genes cause X?" may be a literature question.
        return _unresolved(read, "members", "a pathway") if _PATHWAY_WORD.search(question) else None
    wanted = _NAME_FILTER.search(question)
    name_filter = wanted.group(1).lower().removesuffix("s") if wanted else ""
    # "the KEGG glucose metabolism pathway" where only Reactome has that name: its KEGG counterpart.
    source = _single_source(question)
    other = source if source and found[0].source != source else ""
    return Intent("members", f"members of {found[0].id}" + (f" named *{name_filter}*" if name_filter else ""),
                  (found[0],), compounds=bool(_COMPOUNDS.search(question)), name_filter=name_filter,
                  target_source=other)


def _overview(read: _Read, count: bool) -> Intent | None:
    if not _OVERVIEW.search(read.question) or _LIST_ASKED.search(read.question):
        return None
    found = read.found or (read.fuzzy(1) if _PATHWAY_WORD.search(read.question) else [])
    if found:
        return Intent("overview", f"overview of {found[0].id}", (found[0],))
    return _unresolved(read, "overview", "a pathway") if _PATHWAY_WORD.search(read.question) else None


def _rest(question: str, found: list[PathwayRef] | None) -> str:
    rest = fold(question)
    for ref in found or []:
        rest = rest.replace(fold(ref.name), " ").replace(ref.id.lower(), " ")
    return rest


def _unresolved(read: _Read, kind: Kind, needed: str, found: list[PathwayRef] | None = None) -> Intent:
    """A graph question whose pathway the index does not hold: not found, with the closest names to the part of
    the question no name matched."""
    have = f"found only {', '.join(f'{r.id} {r.name!r}' for r in found)}; " if found else ""
    reason = f"a {kind.replace('_', ' ')} question needs {needed}: {have}no other pathway named in the index"
    return _not_found(read, "pathway", kind, reason, found=found)


def _not_found(read: _Read, missing: str, kind: str, reason: str, asked: str = "",
               found: list[PathwayRef] | None = None) -> Intent:
    rest = _rest(read.question, found)
    closest: tuple[PathwayRef, ...] = ()
    if missing == "pathway":  # the database named first, then any
        closest = tuple(read.pathways.suggest(rest, source=_single_source(read.question))
                        or read.pathways.suggest(rest))
    hints = ", ".join(f"'{r.name}' ({r.id})" for r in closest)
    return Intent("not_found", reason + (f"; closest names: {hints}" if hints else ""), tuple(found or ()),
                  unresolved=(kind,) if kind else (), missing=missing, closest=closest,
                  asked_as=asked or _asked_phrase(rest))


_SCAFFOLD = re.compile(r"^(which|what|how many|list|name|show|give me|tell me about|the|genes?|members?|are|is|in|"
                       r"of|does|do|kegg|reactome|s)\s+", re.I)


def _asked_phrase(rest: str) -> str:
    """The words the question used for what it asked about, without the question's own scaffolding."""
    phrase = rest
    while (shorter := _SCAFFOLD.sub("", phrase)) != phrase:
        phrase = shorter
    return re.sub(r"\s*\b(pathways?|kegg|reactome)\b\s*$", "", phrase).strip() or rest
