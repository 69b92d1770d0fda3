"""`check`: yes/no questions, for every relation Flux holds — "Is X part of Y?" / "Does X fall under Y?" (at any
depth), "Is X a signalling / metabolic / disease pathway?", "Is gene G in X?", "Does X contain compound C?", "Are
X and Y the same pathway?", and each of them as a statement to confirm ("True or false: …", "…, right?").

The answer starts with Yes or No, then what shows it: the lineage through the hierarchy, the KEGG class, the
membership with the pathway's size, the resolved equivalence with its scores — every id cited."""

from __future__ import annotations

import re

from retrieval.answering.typed_answer import SOURCE_LABEL, node_name, relation_sentence, short_name
from retrieval.kinds.base import Expected, QuestionKind, Referents, Statement, Stores, table
from retrieval.kinds.compound_pathways import compound_entities
from retrieval.kinds.not_found import not_found_plan
from retrieval.model.answer import DataTable, FinalAnswer
from retrieval.model.answer_data import CheckData, CheckItem, NodeRef
from retrieval.model.genes import Gene
from retrieval.model.pathways import PathwayRef
from retrieval.model.plan import Entity, Plan
from retrieval.model.polarity import verdict
from retrieval.model.spelling import fold
from retrieval.question.gene_questions import unknown_gene_tokens
from retrieval.question.reading import (
    PATHWAY_WORD,
    REQUEST,
    Read,
    gene_entities,
    is_yes_no,
    pathway_entities,
    position,
)
from retrieval.retrievers.graph_facts import compound_key, node

_FORWARD = (
    r"part of|a part of|under|beneath|below|within|inside|a (?:sub[- ]?pathway|child|descendant|kind|type|"
    r"branch|component|subset|piece|section) of|sub[- ]?pathway of|child of|descendant of|kind of|type of|"
    r"nested (?:in|under|within)|contained (?:in|within)|belong(?:s|ing)? to|falls? under|sits? (?:under|"
    r"in|within)|comes? under|lies? (?:under|within)|listed under|grouped (?:under|in)|"
    r"classified (?:under|in|as)|classed (?:under|in|as)|descend(?:s|ed|ing)? from|derived from|"
    r"included in|a member of|member of|in"
)
_REVERSE = (
    r"contains?|includes?|encompass(?:es)?|covers?|comprises?|subsumes?|a (?:parent|ancestor|super[- ]?pathway)"
    r" of|parent of|ancestor of|above|over|have as (?:a )?(?:sub[- ]?pathway|child)"
)
# Without either pathway found, only these words make "Is X part of Y?" a question about the hierarchy (not "in").
_HIERARCHY_WORDS = re.compile(
    r"\b(?:part of|sub[- ]?pathway of|child of|kind of|falls? under|sits? under|belongs? "
    r"to|nested (?:in|under)|a branch of)\b",
    re.I,
)
_PART_OF = re.compile(rf"\b(?:{_FORWARD}|{_REVERSE})\b", re.I)
# "Do mitochondria play a role in … programmed cell death?": a function, which the hierarchy cannot confirm or deny;
# its "in" makes no part-of question unless a hierarchy word is there too.
_FUNCTION = re.compile(
    r"\b(?:play(?:s|ed|ing)?|ha(?:s|ve)) (?:an? |any |some |no )?(?:\w+ )?roles?\b|\binvolved\b|\bcontribut\w*|"
    r"\bregulat\w*|\baffect\w*|\bcaus\w*|\bmediat\w*|\bpromot\w*|\binhibit\w*|\bneeded\b|\brequired\b|"
    r"\bessential\b|\bimportant\b|\bresponsible\b",
    re.I,
)
_REVERSED = re.compile(rf"\b(?:{_REVERSE})\b", re.I)
_SAME = re.compile(
    r"\b(?:the )?same(?: pathway| thing| as)?\b|\bequivalent\b|\bidentical\b|\bcorrespond\w*\b|"
    r"\bmatch(?:es|ing)?\b|\binterchangeable\b|\bsynonym\w*\b|\bduplicates?\b|\s=\s",
    re.I,
)
_SHARED = re.compile(r"\bshare[ds]?\b|\bin common\b|\boverlap|\bintersect|\bboth\b.*\bgenes?\b", re.I)
_CATEGORIES = (
    ("signalling", re.compile(r"\bsignall?ing\b|\bsignal transduction\b|\bsignal[- ]relay\b", re.I)),
    ("metabolic", re.compile(r"\bmetabolic\b|\bmetabolism\b", re.I)),
    ("disease", re.compile(r"\bdiseases?\b|\bdisorders?\b|\bpatholog\w*\b", re.I)),
)
# Reactome's top-level pathway for each category; KEGG's CLASS line names it instead.
REACTOME_ROOT = {"signalling": "R-HSA-162582", "metabolic": "R-HSA-1430728", "disease": "R-HSA-1643685"}
KEGG_CLASS = {
    "signalling": (
        "Environmental Information Processing",
        {"Signal transduction", "Signaling molecules and interaction"},
    ),
    "metabolic": ("Metabolism", set()),
    "disease": ("Human Diseases", set()),
}
# Words that make a question without a leading verb ask for a list, not a yes or no.
_NOT_TERSE = re.compile(
    r"\b(which|what|where|how|why|when|who|whose|list|name|show|give|tell|count|describe|number|"
    r"genes?|members?|proteins?|compounds?|vs\.?|versus|compare\w*|not|but|except|minus)\b",
    re.I,
)


def _terse(question: str) -> bool:
    """ "glycolysis under metabolism?": two names and a relation word, no verb, nothing asked for a list."""
    return question.rstrip().endswith("?") and not _NOT_TERSE.search(question)


def _pathways_in_order(read: Read) -> list[PathwayRef]:
    found = list(read.found)
    if len(found) < 2:
        found = read.fuzzy(2)
    if len(found) == 1:  # the other name, read from what is left once the one found is taken out
        other = read.pathways.fuzzy(read.rest(found), ignore=read.ignore)
        if other is not None and other.id != found[0].id:
            found.append(other)
    return sorted(found[:2], key=lambda ref: position(read.question, ref))


def _part_of_plan(read: Read, two: list[PathwayRef]) -> Plan:
    first, second = sorted(two, key=lambda r: position(read.question, r))
    if _CATEGORY_ROOTS.get(second.id) and first.source == "kegg":
        # "Is the KEGG cell cycle classed as signal transduction?": KEGG's class is the category asked.
        return _category_plan(first, _CATEGORY_ROOTS[second.id])
    words = fold(read.question).split()
    before = " ".join(words[: position(read.question, first)])
    between = " ".join(words[position(read.question, first) : position(read.question, second)])
    reverse = bool(_REVERSED.search(between) or _REVERSED.search(before))
    subject, obj = (second, first) if reverse else (first, second)
    return Plan(
        kind="check",
        operation="check",
        relation="part_of",
        subjects=pathway_entities([subject]),
        objects=pathway_entities([obj]),
        depth=None,
        reason=f"is {subject.id} part of {obj.id} (any depth)",
    )


_A_CATEGORY = re.compile(r"\b(?:an?|as|the)\s+(signall?ing|signal transduction|metabolic|metabolism|disease)\b", re.I)


def _category(read: Read, found: list[PathwayRef]) -> str:
    """The category asked about: the one written as "a … pathway" / "classed as …" first, else any named."""
    rest = read.rest(found[:1])
    written = _A_CATEGORY.search(rest)
    if written:
        return next(name for name, pattern in _CATEGORIES if pattern.search(written.group(1)))
    return next((name for name, pattern in _CATEGORIES if pattern.search(rest)), "")


_CATEGORY_ROOTS = {root: name for name, root in REACTOME_ROOT.items()}


def _category_plan(pathway: PathwayRef, category: str) -> Plan:
    return Plan(
        kind="check",
        operation="check",
        relation="in_category",
        subjects=pathway_entities([pathway]),
        objects=[Entity(type="category", id=category, name=f"{category} pathway")],
        depth=None,
        reason=f"is {pathway.id} a {category} pathway",
    )


def recognise(read: Read) -> Plan | None:
    question = read.question
    if _SHARED.search(question) or REQUEST.search(question):
        return None
    if not is_yes_no(question):
        return _terse_part_of(read) if _terse(question) else None
    compounds = compound_entities(question)
    genes = read.genes_outside()
    if genes or compounds:
        return _membership(read, genes, compounds)
    if _SAME.search(question):
        two = _pathways_in_order(read)
        return _same_plan(two) if len(two) == 2 else None
    roots = [r for r in read.found if r.id in _CATEGORY_ROOTS]
    if len(read.found) == 2 and len(roots) == 1 and not _PART_OF.search(read.rest(read.found)):
        # "Is PIP3 activates AKT signaling a signal transduction pathway?": the category named by its pathway.
        other = next(r for r in read.found if r.id not in _CATEGORY_ROOTS)
        return (
            _category_plan(other, _CATEGORY_ROOTS[roots[0].id])
            if other.source == "kegg"
            else _part_of_plan(read, [other, roots[0]])
        )
    return _part_of_question(read) or _category_question(read)


def _category_question(read: Read) -> Plan | None:
    """ "Is X a signalling / metabolic / disease pathway?"; "not found" for an X the index does not hold."""
    found = read.found or read.fuzzy(1)
    category = _category(read, found[:1])
    if not category:
        return None
    if len(found) == 1:
        return _category_plan(found[0], category)
    if not found and PATHWAY_WORD.search(read.question):
        return not_found_plan(read, "pathway", "check", f"is it a {category} pathway: no pathway of that name")
    return None


_MEMBERSHIP = re.compile(
    r"\b(?:in|part of|(?:members?|compounds?|genes?|components?) of|belongs? to|contains?|"
    r"includes?|holds?|has|have|"
    r"participates? in|involved in|takes? part in|annotated (?:to|in)|listed (?:in|under)|"
    r"found in|one of|among)\b",
    re.I,
)


def _membership(read: Read, genes: list[Gene], compounds: list[Entity]) -> Plan | None:
    """ "Is TP53 in the apoptosis pathway?", "Does KEGG glycolysis contain C00022?"."""
    found = read.found or read.fuzzy(1)
    if len(found) != 1 or not _MEMBERSHIP.search(read.rest(found)):
        return None
    subjects = [*gene_entities(genes), *compounds]
    return Plan(
        kind="check",
        operation="check",
        relation="member_of",
        subjects=subjects,
        objects=pathway_entities(found),
        reason=f"is {', '.join(e.name for e in subjects)} a member of {found[0].id}",
    )


def _part_of_question(read: Read) -> Plan | None:
    """ "Is X part of Y?" between two pathways; "not found" for a side the index does not hold."""
    rest = read.rest(read.found)
    if not _PART_OF.search(rest) or (_FUNCTION.search(rest) and not _HIERARCHY_WORDS.search(rest)):
        return None
    two = _pathways_in_order(read)
    if len(two) < 2 and _category(read, two[:1]):
        return None  # "Is X part of the metabolic pathways?": a category
    if len(two) == 2:
        return _part_of_plan(read, two)
    unknown = unknown_gene_tokens(read.question, read.genes)
    if unknown and len(two) == 1:  # "Is SDHD a member of Reactome's citric acid cycle?": a gene no table holds
        return not_found_plan(
            read, "gene", "check", f"no gene {', '.join(unknown)} in the index", asked=", ".join(unknown), found=two
        )
    if len(two) == 1 and (asked := _other_side(read, two[0])):
        return not_found_plan(
            read,
            "name",
            "check",
            f"is {two[0].id} part of '{asked}': nothing named '{asked}' in the index",
            asked=asked,
            found=two,
        )
    if not two and _HIERARCHY_WORDS.search(rest) and (asked := _other_side(read, None)):
        return not_found_plan(read, "pathway", "check", f"no pathway of '{asked}' in the index", asked=asked)
    return None


_GENERIC_SIDE = re.compile(
    r"^(?:an?|the|any|some|one|another|other|larger|bigger|broader|parent|higher|top|level|"
    r"pathways?|process(?:es)?|kegg|reactome|group|category|hierarchy|database|s|\W)*$",
    re.I,
)


def _terse_part_of(read: Read) -> Plan | None:
    """ "glycolysis under metabolism?", "X = Y?": two names and a relation word, no verb."""
    if len(read.found) != 2:
        return None
    if _SAME.search(read.question):
        return _same_plan(_pathways_in_order(read))
    return _part_of_plan(read, list(read.found)) if _PART_OF.search(read.rest(read.found)) else None


def _same_plan(two: list[PathwayRef]) -> Plan:
    return Plan(
        kind="check",
        operation="check",
        relation="corresponds_to",
        subjects=pathway_entities(two[:1]),
        objects=pathway_entities(two[1:]),
        reason=f"are {two[0].id} and {two[1].id} the same pathway",
    )


def _other_side(read: Read, found: PathwayRef | None) -> str:
    """The words naming the other pathway of "Is X part of Y?" when the index holds no Y ('' when that side names
    nothing: "Is X part of a larger pathway?" asks for X's parents)."""
    rest = re.sub(
        r"^\s*(?:true or false|is it (?:true|correct) that|can you confirm(?: that)?)\W*",
        "",
        read.rest([found] if found else []),
    )
    sides = _PART_OF.split(rest, maxsplit=1)
    if len(sides) < 2:
        return ""
    words = [
        w
        for side in sides
        for w in re.findall(r"[a-z0-9][a-z0-9-]*", side)
        if w
        not in {
            "is",
            "are",
            "does",
            "do",
            "did",
            "the",
            "a",
            "an",
            "it",
            "right",
            "correct",
            "true",
            "false",
            "or",
            "fall",
            "falls",
            "sit",
            "sits",
            "belong",
            "belongs",
            "really",
            "actually",
            "pathway",
            "pathways",
            "kegg",
            "reactome",
            "in",
        }
    ]
    asked = " ".join(words)
    return "" if not asked or _GENERIC_SIDE.match(asked) else asked


def accepts(plan: Plan) -> bool:
    return plan.operation == "check" and plan.relation in ("member_of", "part_of", "in_category", "corresponds_to")


# --- facts --------------------------------------------------------------------------------------------------------
def facts(plan: Plan, stores: Stores) -> CheckData:
    relation = plan.relation
    check = {"member_of": _member, "part_of": _part_of, "in_category": _in_category, "corresponds_to": _same}[relation]  # type: ignore[index]
    items = [check(subject, obj, stores) for obj in plan.objects for subject in plan.subjects]
    return CheckData(relation=relation, items=items, negated=plan.negated, choice=plan.choice)  # type: ignore[arg-type]


def _member(subject: Entity, pathway: Entity, stores: Stores) -> CheckItem:
    genes, compounds = stores.graph.members([pathway.id]).get(pathway.id, ([], []))
    if subject.type == "compound":
        return CheckItem(
            subject=node(subject),
            object=node(pathway),
            holds=compound_key(subject.id) in compounds,
            size=len(compounds),
            detail="compounds",
        )
    return CheckItem(
        subject=node(subject),
        object=node(pathway),
        holds=subject.id in {g.id for g in genes},
        size=len(genes),
        detail="genes",
    )


def _top_lineage(ancestors: dict[str, list[NodeRef]]) -> list[NodeRef]:
    return max(ancestors.values(), key=len) if ancestors else []


def _part_of(subject: Entity, obj: Entity, stores: Stores) -> CheckItem:
    if subject.source != obj.source:  # each database has its own hierarchy: the resolution links the two
        mapping = stores.graph.between(subject.id, obj.id)
        inside = mapping is not None and mapping.relation == "part_of" and mapping.direction == "inside"
        return CheckItem(
            subject=node(subject), object=node(obj), holds=inside, mapping=mapping, detail="across databases"
        )
    ancestors = stores.graph.ancestors(subject.id)
    if obj.id in ancestors:
        return CheckItem(subject=node(subject), object=node(obj), holds=True, path=ancestors[obj.id])
    reverse = subject.id in stores.graph.ancestors(obj.id)
    return CheckItem(
        subject=node(subject),
        object=node(obj),
        holds=False,
        path=_top_lineage(ancestors),
        detail="the other way round" if reverse else "",
    )


def _in_category(subject: Entity, category: Entity, stores: Stores) -> CheckItem:
    if subject.source == "kegg":
        row = stores.graph.pathway(subject.id) or {}
        top, subs = KEGG_CLASS[category.id]
        kegg_class = "; ".join(c for c in (row.get("category"), row.get("subcategory")) if c)
        holds = row.get("category") == top and (not subs or row.get("subcategory") in subs)
        return CheckItem(
            subject=node(subject),
            object=node(category),
            holds=holds,
            detail=f"KEGG class: {kegg_class}" if kegg_class else "no KEGG class in the graph",
        )
    root = REACTOME_ROOT[category.id]
    ancestors = stores.graph.ancestors(subject.id)
    if subject.id == root:
        return CheckItem(subject=node(subject), object=node(category), holds=True, path=[node(subject)])
    if root in ancestors:
        return CheckItem(subject=node(subject), object=node(category), holds=True, path=ancestors[root])
    return CheckItem(
        subject=node(subject),
        object=node(category),
        holds=False,
        path=_top_lineage(ancestors),
        detail=f"not under {root}",
    )


def _same(subject: Entity, obj: Entity, stores: Stores) -> CheckItem:
    if subject.id == obj.id:
        return CheckItem(subject=node(subject), object=node(obj), holds=True, detail="the same id")
    if subject.source == obj.source:
        return CheckItem(subject=node(subject), object=node(obj), holds=False, detail="two pathways of one database")
    mapping = stores.graph.between(subject.id, obj.id)
    return CheckItem(
        subject=node(subject),
        object=node(obj),
        mapping=mapping,
        holds=mapping is not None and mapping.relation == "equivalent",
    )


# --- the answer ---------------------------------------------------------------------------------------------------
def _lineage(path: list[NodeRef]) -> str:
    return " > ".join(short_name(n) for n in path)


def _item_statement(relation: str, item: CheckItem, negated: bool) -> Statement:
    s, o = item.subject, item.object
    cited = list(dict.fromkeys([s.id, *(n.id for n in item.path), *([o.id] if o.source != "" else [])]))
    head = verdict(item.holds, negated)
    if relation == "member_of":
        what = item.detail or "genes"
        text = (
            f"{head}: {s.name or s.id} is {'' if item.holds else 'not '}one of the {item.size} member {what} "
            f"of {node_name(o)}."
        )
        return text, [o.id]
    if relation == "part_of":
        return _part_of_text(head, item), cited
    if relation == "in_category":
        return _category_text(head, item), [c for c in cited if c != o.id]
    return _same_text(head, item), cited


def _part_of_text(head: str, item: CheckItem) -> str:
    s, o = item.subject, item.object
    if item.detail == "across databases":
        if item.mapping is None:
            return (
                f"{head}: {node_name(s)} and {node_name(o)} are in different databases, and the Reactome ↔ KEGG "
                "resolution does not place one within the other."
            )
        return f"{head}: {relation_sentence(s, item.mapping)}"
    if item.holds:
        direct = " directly" if len(item.path) == 2 else f", through {_lineage(item.path)}"
        return f"{head}: {node_name(s)} is part of {node_name(o)}{direct}."
    if item.detail == "the other way round":
        return f"{head}: it is the other way round — {node_name(o)} is part of {node_name(s)}."
    where = f"; its lineage is {_lineage(item.path)}" if len(item.path) > 1 else "; it is a top-level pathway"
    return (
        f"{head}: {node_name(s)} is not part of {node_name(o)} in the {SOURCE_LABEL.get(s.source, '')} "
        f"hierarchy{where}."
    )


def _category_text(head: str, item: CheckItem) -> str:
    s, category = item.subject, item.object.id
    if s.source == "kegg":
        named = (
            " (its name says signaling; KEGG's class is what decides here)"
            if (category == "signalling" and re.search(r"signal", s.name, re.I) and not item.holds)
            else ""
        )
        return f"{head}: {node_name(s)} is {'' if item.holds else 'not '}a {category} pathway — {item.detail}{named}."
    if item.holds:
        through = f", through {_lineage(item.path)}" if len(item.path) > 1 else ""
        return (
            f"{head}: {node_name(s)} is a {category} pathway: it sits under Reactome's "
            f"{REACTOME_ROOT[category]}{through}."
        )
    where = f"its lineage is {_lineage(item.path)}" if len(item.path) > 1 else "it is a top-level pathway"
    return (
        f"{head}: {node_name(s)} is not a {category} pathway in Reactome's hierarchy — {where}, not under "
        f"{REACTOME_ROOT[category]}."
    )


def _same_text(head: str, item: CheckItem) -> str:
    s, o = item.subject, item.object
    if item.detail == "the same id":
        return f"{head}: {node_name(s)} is one pathway."
    if item.detail == "two pathways of one database":
        return f"{head}: {node_name(s)} and {node_name(o)} are two different {SOURCE_LABEL.get(s.source, '')} pathways."
    if item.mapping is None:
        return f"{head}: the Reactome ↔ KEGG resolution does not link {node_name(s)} and {node_name(o)}."
    if item.holds:
        return f"{head}: {relation_sentence(s, item.mapping)}"
    return f"{head}, not the same pathway: {relation_sentence(s, item.mapping)}"


def statements(data: CheckData) -> list[Statement]:
    out = [_item_statement(data.relation, item, data.negated) for item in data.items]
    if data.choice:
        return [_choice_statement(data), *out]
    if len(data.items) > 1:
        held = sum(item.holds for item in data.items)
        # "X and Y are in Z" holds when all do; "X and Y are not in Z" is false when any is
        head = verdict(held > 0, True) if data.negated else verdict(held == len(data.items), False)
        cited = list(dict.fromkeys(c for _, ids in out for c in ids))
        out.insert(0, (f"{head}: {held} of the {len(data.items)} hold.", cited))
    return out


def _choice_statement(data: CheckData) -> Statement:
    """ "Of the 3 options, 2 hold: GCK and PKM." — the options for which the sentence as written holds."""
    chosen = [item for item in data.items if item.holds != data.negated]
    by_subject = len({item.subject.id for item in data.items}) > 1
    options = [item.subject if by_subject else item.object for item in chosen]
    names = [option.name for option in options]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    n = len(data.items)
    verb = "holds" if len(chosen) == 1 else "hold"
    head = f"Of the {n} options, {len(chosen)} {verb}: {listed}." if chosen else f"Of the {n} options, none holds."
    cited = [node.id for item in chosen for node in (item.subject, item.object)]
    return head, list(dict.fromkeys(cited))


def data_table(data: CheckData) -> DataTable:
    return table(
        f"Checked: {data.relation.replace('_', ' ')}",
        ["subject", "object", "holds", "shown by"],
        [[i.subject.id, i.object.id, "yes" if i.holds else "no", _lineage(i.path) or i.detail] for i in data.items],
    )


def refers_to(data: CheckData) -> Referents:
    pathways = [n.id for i in data.items for n in (i.subject, i.object) if n.source in ("reactome", "kegg")]
    genes = [i.subject.name for i in data.items if i.subject.source == "hgnc"]
    return Referents(pathways=list(dict.fromkeys(pathways)), genes=genes)


def grade(answer: FinalAnswer, expected: Expected) -> bool:
    """The verdict first, right, about the pair asked."""
    data = answer.data
    if not isinstance(data, CheckData) or len(data.items) != 1:
        return False
    item, expected_verdict = data.items[0], expected.get("verdict", "")
    return (
        item.subject.id == expected.get("subject")
        and item.object.id == expected.get("object")
        and (not expected_verdict or item.holds == (expected_verdict == "yes"))
        and data.negated == (expected.get("negated") == "yes")
        and answer.answer.startswith(verdict(item.holds, data.negated))
    )


KIND = QuestionKind(
    name="check",
    recognisers=((45, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=data_table,
    refers_to=refers_to,
    grade=grade,
)
