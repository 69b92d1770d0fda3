"""Entrez terms from a literature request, and the refinement a failed translation check leads to.

A term is a list of AND groups, one per concept and one per constraint, so a refinement edits the group a problem
is about and says what it changed and why. Untagged concepts are left to Automatic Term Mapping (it maps a word to
MeSH and its entry terms better than any list here); a refinement tags or quotes only what ATM got wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from dagster_project.core.text import words
from retrieval.model import pubmed_vocabulary as vocabulary
from retrieval.model.literature import LiteratureRequest, TranslationProblem
from retrieval.pubmed.translation import abbreviations_in, concept_words

FIELD_TAG = {"title": "ti", "title/abstract": "tiab", "": ""}


@dataclass(frozen=True)
class Group:
    """One AND group: the concept or constraint it carries and its Entrez text."""

    about: str
    text: str


@dataclass(frozen=True)
class Term:
    groups: tuple[Group, ...] = field(default_factory=tuple)

    def text(self) -> str:
        texts = [g.text for g in self.groups]
        return texts[0] if len(texts) == 1 else " AND ".join(f"({t})" if _or_outside(t) else t for t in texts)

    def with_group(self, about: str, text: str) -> Term:
        """This term with the group about `about` replaced (or added at the end)."""
        if any(g.about == about for g in self.groups):
            return replace(self, groups=tuple(Group(about, text) if g.about == about else g for g in self.groups))
        return replace(self, groups=(*self.groups, Group(about, text)))

    def without(self, about: str) -> Term:
        return replace(self, groups=tuple(g for g in self.groups if g.about != about))


def _or_outside(text: str) -> bool:
    """Whether the text has an OR outside parentheses (it must be wrapped before AND-ing it with another)."""
    depth = 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith(" OR ", i):
            return True
    return False


def _tagged(concept: str, tag: str) -> str:
    """A concept limited to one field: each word tagged, so word order and stop words do not matter."""
    kept = [w for w in words(concept, "'-") if w.lower() in set(concept_words(w))]
    parts = [f"{w}[{tag}]" for w in kept] or [f'"{concept}"[{tag}]']
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def concept_text(request: LiteratureRequest, concept: str) -> str:
    tag = FIELD_TAG[request.field]
    if concept in request.quoted:
        return f'"{concept}"[{tag or "tiab"}]'
    return _tagged(concept, tag) if tag else concept


def build(request: LiteratureRequest) -> Term:
    """The first term for a request: its concepts for ATM to map, its publication types and population tagged."""
    groups = [Group(c, concept_text(request, c)) for c in request.concepts]
    groups += [Group(f"pt:{kind}", f'"{kind}"[pt]') for kind in request.publication_types]
    groups += [Group(f"population:{heading}", f'"{heading}"[mh]') for heading in request.population]
    return Term(tuple(groups))


def strip_tags(text: str, tags: list[str]) -> str:
    for tag in tags:
        text = text.replace(f"[{tag}]", "")
    return text


def without_tags(term: Term, tags: list[str]) -> Term:
    """The term with these `[tag]`s removed from every group (their words left for ATM)."""
    return Term(tuple(Group(strip_tags(g.about, tags), strip_tags(g.text, tags)) for g in term.groups))


def _pairs(phrase: str) -> list[str]:
    """A swallowed phrase's concepts: its words two by two ("long covid" AND "brain fog"); of five or more, an odd
    last word joins the pair before it, of three it stands alone ("covid vaccine" AND "myocarditis")."""
    found = phrase.split()
    pairs = [" ".join(found[i : i + 2]) for i in range(0, len(found), 2)]
    if len(pairs) > 2 and len(pairs[-1].split()) == 1:
        pairs[-2:] = [f"{pairs[-2]} {pairs[-1]}"]
    return pairs


def refine(
    request: LiteratureRequest, term: Term, problems: list[TranslationProblem]
) -> tuple[LiteratureRequest, Term, list[str]] | None:
    """The request and term a next attempt sends, and each change with its reason; None when no problem has a
    refinement (the search stops there and says why)."""
    changes: list[str] = []
    for problem in problems:
        request, term, change = _apply(request, term, problem)
        if change:
            changes.append(change)
    return (request, term, changes) if changes else None


def _owner(request: LiteratureRequest, term: Term, written: str) -> str:
    """The concept whose group holds these words (the request's concept as the question wrote it)."""
    folded = set(concept_words(written))
    for group in term.groups:
        if folded and folded <= set(concept_words(group.about)):
            return group.about
    return written


def _without(concept: str, phrase: str) -> str:
    """The concept with a phrase taken out (whole words, any case)."""
    return " ".join(re.sub(rf"(?i)(?<!\w){re.escape(phrase)}(?!\w)", " ", concept).split())


def _apply(request: LiteratureRequest, term: Term, problem: TranslationProblem) -> tuple[LiteratureRequest, Term, str]:
    code, concept = problem.code, problem.concept
    if code == "phrase_swallowed":
        owner = _owner(request, term, concept)
        kept = owner
        for phrase, _heading in abbreviations_in(owner):  # an abbreviation gets its own group (its own problem)
            kept = _without(kept, phrase)
        pairs = _pairs(kept)
        if len(pairs) < 2:
            return request, term, ""
        concepts = [c for c in request.concepts if c != owner] + pairs
        new_term = term.without(owner)
        for pair in pairs:
            new_term = new_term.with_group(pair, concept_text(request, pair))
        joined = " AND ".join(f'"{p}"' for p in pairs)
        return (
            request.model_copy(update={"concepts": concepts}),
            new_term,
            f'split "{kept}" into {joined}: it was searched as one literal phrase',
        )
    if code == "unmapped_abbreviation":
        heading = vocabulary.expansion(concept) or concept
        owner = _owner(request, term, concept)
        rest = _without(owner, concept) if owner != concept else ""
        quoted = f'"{concept}"' if " " in concept else concept
        text = f'("{heading}"[mh] OR {quoted}[tiab])' + (f" AND {rest}" if rest else "")
        return (
            request,
            term.without(owner).with_group(owner, text),
            (
                f'searched "{concept}" as the MeSH heading "{heading}" or as written in title/abstract: it had stayed '
                "in [All Fields]"
            ),
        )
    if code == "wrong_sense":
        context = set(concept_words(request.topic)) | {w for c in request.concepts for w in concept_words(c)}
        sense = vocabulary.meant_sense(concept, context)
        if sense is None:
            return request, term, ""
        wrong, phrase = sense
        owner = _owner(request, term, concept)
        written = next((w for w in owner.split() if w.lower() == concept), concept)
        rest = _without(owner, concept)
        if set(concept_words(phrase)) <= set(concept_words(rest)):
            text, meant, did = rest, rest, f'dropped "{written}"'
        else:
            text = f'("{phrase}"[mh] OR {written}[tiab])' + (f" AND {rest}" if rest else "")
            meant, did = f"{written} {rest}".strip(), f'searched "{phrase}" (MeSH) or "{written}" in title/abstract'
        concepts = [meant if c == owner else c for c in request.concepts]
        return (
            request.model_copy(update={"concepts": concepts}),
            term.without(owner).with_group(meant, text),
            f'{did}: it was mapped to "{wrong}", not "{phrase}"',
        )
    if code == "concept_missing":
        return (
            request,
            term.with_group(concept, f'"{concept}"[{FIELD_TAG[request.field] or "tiab"}]'),
            (f'searched "{concept}" as a phrase in {request.field or "title/abstract"}: the translation had lost it'),
        )
    if code == "date_missing" and request.mindate:
        text = f"{request.mindate}:{request.maxdate}[dp]"
        return (
            request,
            term.with_group("dates", text),
            (f"added {text}: the publication dates were not in the translation"),
        )
    if code == "field_missing":
        tag = FIELD_TAG[request.field]
        new_term = term
        for c in request.concepts:
            new_term = new_term.with_group(c, f'"{c}"[{tag}]' if c in request.quoted else _tagged(c, tag))
        return request, new_term, f"tagged every concept [{tag}]: the translation searched other fields too"
    if code == "publication_type_missing":
        return (
            request,
            term.with_group(f"pt:{concept}", f'"{concept}"[pt]'),
            (f'added "{concept}"[pt]: the publication type was not in the translation'),
        )
    if code == "population_missing":
        return (
            request,
            term.with_group(f"population:{concept}", f'"{concept}"[mh]'),
            (f'added "{concept}"[mh]: the population was not in the translation'),
        )
    return request, term, ""
