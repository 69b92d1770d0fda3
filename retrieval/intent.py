"""What kind of question is this, and about which pathways and genes? (Rules; the router's first step.)

Kinds answered from the graph: `members` (genes of a pathway), `gene_pathways` (pathways holding given genes),
`counterpart` (a pathway's match in the other database), `shared_genes` (genes two pathways share), `compare` (two
pathways or two genes side by side), `hierarchy` (parents and sub-pathways). Everything else is `literature`,
answered from text evidence. A graph kind whose entities cannot be found falls back to `literature` with the
reason, so nothing is answered from a guessed pathway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from retrieval.genes import Gene, GeneLexicon
from retrieval.pathways import PathwayLexicon, PathwayRef, fold

Kind = Literal["members", "gene_pathways", "counterpart", "shared_genes", "compare", "hierarchy", "literature"]
GRAPH_KINDS: tuple[Kind, ...] = ("members", "gene_pathways", "counterpart", "shared_genes", "compare", "hierarchy")

_COMPARE = re.compile(r"\bcompare\b|\bcomparison\b|\bvs\.?(?=\s)|\bversus\b|\bdiffer|\bdifference", re.I)
_SHARED = re.compile(r"\bshare[ds]?\b|\bin common\b|\bcommon to\b|\boverlap", re.I)
_COUNTERPART = re.compile(r"\bcorrespond|\bcounterpart|\bequivalent\b|\bmatch(es|ing)?\b|\bmaps? to\b|\bmapped\b|"
                          r"\bsame as\b", re.I)
_HIERARCHY = re.compile(r"\bsub-?pathways?\b|\bchild(ren)? pathways?\b|\bparent pathways?\b|\bpart of which\b|"
                        r"\bwhich (larger|parent|broader) pathway", re.I)
_GENE_PATHWAYS = re.compile(r"\b(which|what) pathways?\b|\bpathways? (contain|include|involve|with|hold)|"
                            r"\bin which pathways?\b", re.I)
_MEMBERS = re.compile(r"\b(genes?|members?|proteins?|participants?|compounds?|metabolites?)\b", re.I)
_COMPOUNDS = re.compile(r"\b(compounds?|metabolites?)\b", re.I)
_DATABASE = re.compile(r"\b(kegg|reactome)\b", re.I)
# "Which genes of glycolysis are kinases?": a filter on the member genes' names.
_NAME_FILTER = re.compile(r"\b(?:are|is)\s+(?:an?\s+)?([A-Za-z][A-Za-z-]{3,})\s*\??\s*$", re.I)


@dataclass(frozen=True)
class Intent:
    kind: Kind
    reason: str
    pathways: tuple[PathwayRef, ...] = ()
    genes: tuple[Gene, ...] = ()
    target_source: str = ""  # counterpart, and members asked of the other database: the database asked for
    unresolved: tuple[str, ...] = field(default=())  # what a graph kind needed and could not find
    compounds: bool = False  # members: the question asks for compounds, not genes
    name_filter: str = ""  # members: only genes whose name contains this ("kinase")


def _databases(question: str) -> list[str]:
    return [m.group(1).lower() for m in _DATABASE.finditer(question)]


def _with_fuzzy(question: str, found: list[PathwayRef], lexicon: PathwayLexicon, want: int) -> list[PathwayRef]:
    """Top up to `want` pathways by name-word coverage, in a database the question names but no match has."""
    for source in dict.fromkeys(_databases(question) or ["reactome", "kegg"]):
        if len(found) >= want:
            break
        if any(r.source == source for r in found) and len(set(_databases(question))) > 1:
            continue
        extra = lexicon.fuzzy(question, source)
        if extra and extra.id not in {r.id for r in found}:
            found.append(extra)
    return found


def _counterpart(question: str, found: list[PathwayRef], genes: list[Gene]) -> Intent:
    named = _databases(question)
    # "Which Reactome pathway … the KEGG apoptosis pathway?": the pathway asked about is in the last-named one.
    source = named[-1] if named else ""
    pick = next((r for r in found if r.source == source), found[0])
    target = "kegg" if pick.source == "reactome" else "reactome"
    return Intent("counterpart", f"counterpart of {pick.id} in {target}", (pick,), tuple(genes), target)


def classify(question: str, genes: GeneLexicon, pathways: PathwayLexicon) -> Intent:
    named_genes = [m.gene for m in genes.find(question)]
    found = pathways.find(question)
    if _COMPARE.search(question):
        if len(named_genes) >= 2 and not found:
            return Intent("compare", "two genes compared", genes=tuple(named_genes[:2]))
        found = _with_fuzzy(question, found, pathways, 2)
        if len(found) >= 2:
            return Intent("compare", "two pathways compared", tuple(found[:2]))
        return _unresolved("compare", question, "two pathways or two genes", pathways, found)
    counterpart_asked = bool(_COUNTERPART.search(question) and _databases(question))
    if _SHARED.search(question) and (found or not named_genes):
        two = _with_fuzzy(question, list(found), pathways, 2)
        if len(two) >= 2:
            return Intent("shared_genes", "genes shared by two pathways", tuple(two[:2]))
        missing = {"reactome", "kegg"} - {r.source for r in two}
        if len(two) == 1 and len(missing) == 1 and len(set(_databases(question))) == 2 and not counterpart_asked:
            # "the Reactome and KEGG citric acid cycle pathways": the one found, and its resolved counterpart.
            other = missing.pop()
            return Intent("shared_genes", f"genes shared by {two[0].id} and its {other} counterpart", (two[0],),
                          target_source=other)
        if not counterpart_asked:  # "which KEGG pathway corresponds …, and which genes do they share?" goes on
            return _unresolved("shared_genes", question, "two pathways", pathways, two)
    if _HIERARCHY.search(question):
        found = found or _with_fuzzy(question, found, pathways, 1)
        if found:
            return Intent("hierarchy", "parents and sub-pathways", (found[0],))
        return _unresolved("hierarchy", question, "a pathway", pathways)
    if counterpart_asked:
        found = found or _with_fuzzy(question, found, pathways, 1)
        if found:
            return _counterpart(question, found, named_genes)
        return _unresolved("counterpart", question, "a pathway", pathways)
    if named_genes and _GENE_PATHWAYS.search(question):
        return Intent("gene_pathways", f"pathways holding {', '.join(g.symbol for g in named_genes)}",
                      genes=tuple(named_genes))
    if _MEMBERS.search(question) and re.search(r"\b(which|what|list|name|show)\b", question, re.I):
        found = found or _with_fuzzy(question, found, pathways, 1)
        if found:
            wanted = _NAME_FILTER.search(question)
            name_filter = wanted.group(1).lower().removesuffix("s") if wanted else ""
            # "the KEGG glucose metabolism pathway" where only Reactome has that name: its KEGG counterpart.
            named = set(_databases(question))
            other = next(iter(named)) if len(named) == 1 and found[0].source not in named else ""
            return Intent("members", f"members of {found[0].id}" + (f" named *{name_filter}*" if name_filter else ""),
                          (found[0],), compounds=bool(_COMPOUNDS.search(question)), name_filter=name_filter,
                          target_source=other)
    return Intent("literature", "no graph question recognised", tuple(found), tuple(named_genes))


def _unresolved(kind: Kind, question: str, needed: str, pathways: PathwayLexicon,
                found: list[PathwayRef] | None = None) -> Intent:
    """Which names were found, which part of the question was not, and the closest names to that part."""
    rest = fold(question)
    for ref in found or []:
        rest = rest.replace(fold(ref.name), " ").replace(ref.id.lower(), " ")
    hints = ", ".join(f"'{r.name}' ({r.id})" for r in pathways.suggest(rest))
    have = f"found only {', '.join(f'{r.id} {r.name!r}' for r in found)}; " if found else ""
    reason = (f"a {kind.replace('_', ' ')} question needs {needed}: {have}no other pathway named in the index"
              + (f"; closest names: {hints}" if hints else ""))
    return Intent("literature", reason, unresolved=(kind,))
