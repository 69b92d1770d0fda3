"""The translation check: does NCBI's `querytranslation` say what the request asked, before its count is trusted?

Automatic Term Mapping (PubMed Help, "How PubMed works: automatic term mapping") rewrites an untagged term: it looks
it up in the MeSH translation table, then the journals and authors tables, and otherwise searches it in [All Fields];
a phrase it cannot map may be searched as one literal phrase. It fails in known ways, each found here from the
translation alone (deterministic, no model):

- `phrase_swallowed`: a run of three or more words searched as one literal [All Fields] phrase that the question did
  not quote ("long covid brain fog" → `"long covid brain fog"[All Fields]`, two concepts never combined);
- `unmapped_abbreviation`: an abbreviation left in [All Fields] although MeSH has a heading for what it stands for
  ("ARBs" → `"ARBs"[All Fields]`, missing the angiotensin receptor antagonists literature);
- `wrong_sense`: a word mapped to a heading of another sense than the question's ("cold exposure brown fat" →
  "common cold"[MeSH Terms]);
- `concept_missing`: a concept of the request in no AND group of the translation;
- `date_missing`, `field_missing`, `publication_type_missing`, `population_missing`: a constraint of the request
  that the translation does not carry;
- `too_broad`: a count near the size of PubMed itself, which a request with concepts cannot mean.
"""

from __future__ import annotations

import re

from dagster_project.core.text import CONCEPT_JOINERS, words
from retrieval.model import pubmed_vocabulary as vocabulary
from retrieval.model.literature import LiteratureRequest, TranslationProblem

_TERM_RE = re.compile(r'"([^"]+)"\[([^\]]+)\]|([^\s()"]+)\[([^\]]+)\]')
_DATE_TAGS = ("date - publication", "dp", "pdat", "publication date")
TOO_BROAD = 3_000_000  # PubMed holds some 38 million records; a topic matching this many lost a concept


def split_and(translation: str) -> list[str]:
    """The translation's top-level AND groups, outer parentheses removed."""
    groups, depth, start, i = [], 0, 0, 0
    text = translation.strip()
    while i < len(text):
        char = text[i]
        if char == '"':
            i = text.find('"', i + 1) + 1 or len(text)
            continue
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith(" AND ", i):
            groups.append(text[start:i])
            start = i = i + 5
            continue
        i += 1
    groups.append(text[start:])
    return [_unwrap(group.strip()) for group in groups if group.strip()]


def _unwrap(group: str) -> str:
    while group.startswith("(") and group.endswith(")") and _balanced(group[1:-1]):
        group = group[1:-1].strip()
    return group


def _balanced(text: str) -> bool:
    depth = 0
    for char in re.sub(r'"[^"]*"', "", text):
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def terms(group: str) -> list[tuple[str, str]]:
    """(text, tag) of every tagged term in a group; tags lower-cased."""
    return [
        ((m.group(1) or m.group(3)).lower(), (m.group(2) or m.group(4)).strip().lower())
        for m in _TERM_RE.finditer(group)
    ]


def concept_words(text: str) -> list[str]:
    """The lower-cased words of `text` a translation is checked for: "'" and "-" join a word, joiners dropped."""
    return [w for w in words(text.lower(), "'-") if w not in CONCEPT_JOINERS]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def missing_words(translation: str, concept: str) -> list[str]:
    """The words of a concept no term of the translation holds (plurals folded); ATM may spread one concept over
    several AND groups, so any term counts. An abbreviation counts as held by the MeSH heading it stands for."""
    held = {_stem(w) for text, _tag in terms(translation) for w in concept_words(text)}
    headings = {text for text, tag in terms(translation) if tag.startswith("mesh")}
    return [w for w in concept_words(concept) if _stem(w) not in held and vocabulary.expansion(w) not in headings]


def covers(group: str, concept: str) -> bool:
    return not missing_words(group, concept)


def check(request: LiteratureRequest, translation: str, count: int | None) -> list[TranslationProblem]:
    """Every way the translation departs from the request (empty: it may be trusted)."""
    groups = split_and(translation)
    problems = _phrases(request, groups) + _concepts(request, translation) + _constraints(request, translation)
    if count is not None and count >= TOO_BROAD and request.concepts:
        problems.append(
            TranslationProblem(
                code="too_broad",
                message=f"{count:,} records is most of PubMed: the concepts were not combined with AND",
            )
        )
    return problems


def _phrases(request: LiteratureRequest, groups: list[str]) -> list[TranslationProblem]:
    quoted = {q.lower() for q in request.quoted}
    out = []
    for group in groups:
        found = terms(group)
        if (
            len(found) == 1
            and found[0][1] == "all fields"
            and len(concept_words(found[0][0])) >= 3
            and found[0][0] not in quoted
        ):
            out.append(
                TranslationProblem(
                    code="phrase_swallowed",
                    concept=found[0][0],
                    message=(
                        f'"{found[0][0]}" was searched as one literal phrase in all fields, so its concepts were never '
                        "searched separately"
                    ),
                )
            )
    return out


def _concepts(request: LiteratureRequest, translation: str) -> list[TranslationProblem]:
    out: list[TranslationProblem] = []
    topic_words = set(concept_words(request.topic)) | {w for c in request.concepts for w in concept_words(c)}
    found = terms(translation)
    for concept in request.concepts:
        # An ambiguous abbreviation a refinement dropped for the phrase it stands for here is not lost ("PD" beside
        # "peritoneal dialysis").
        lost = [w for w in missing_words(translation, concept) if not _spelled_out(w, concept, topic_words)]
        if lost:
            out.append(
                TranslationProblem(
                    code="concept_missing",
                    concept=concept,
                    message=(f'"{concept}" is not all in the translation (missing: {", ".join(lost)})'),
                )
            )
            continue
        out += _unmapped(concept, found) + _wrong_senses(concept, found, topic_words)
    return out


def abbreviations_in(concept: str) -> list[tuple[str, str]]:
    """(the words as written, the MeSH heading) for each abbreviation of the concept the vocabulary can expand:
    single words ("ARBs") or short phrases ("ACE inhibitors"), longest first, none overlapping."""
    tokens = concept.split()
    found, used = [], set()
    for size in (3, 2, 1):
        for start in range(len(tokens) - size + 1):
            span = set(range(start, start + size))
            phrase = " ".join(tokens[start : start + size])
            heading = vocabulary.expansion(phrase)
            if heading and not span & used:
                found.append((phrase, heading))
                used |= span
    return found


def _spelled_out(word: str, concept: str, context: set[str]) -> bool:
    sense = vocabulary.meant_sense(word, context)
    return sense is not None and set(concept_words(sense[1])) <= set(concept_words(concept))


def _unmapped(concept: str, found: list[tuple[str, str]]) -> list[TranslationProblem]:
    """Abbreviations of the concept searched only as text although MeSH has a heading for them."""
    return [
        TranslationProblem(
            code="unmapped_abbreviation",
            concept=phrase,
            message=(
                f'"{phrase}" stayed in [All Fields] (no MeSH heading), though it stands for the MeSH heading '
                f'"{heading}"'
            ),
        )
        for phrase, heading in abbreviations_in(concept)
        if not any(text == heading and tag.startswith("mesh") for text, tag in found)
    ]


def _wrong_senses(concept: str, found: list[tuple[str, str]], topic_words: set[str]) -> list[TranslationProblem]:
    out = []
    for word in concept_words(concept):
        sense = vocabulary.meant_sense(word, topic_words)
        if sense and any(text == sense[0] and tag.startswith("mesh") for text, tag in found):
            out.append(
                TranslationProblem(
                    code="wrong_sense",
                    concept=word,
                    message=(
                        f'"{word}" was mapped to the MeSH heading "{sense[0]}", but the question means "{sense[1]}"'
                    ),
                )
            )
    return out


def _constraints(request: LiteratureRequest, translation: str) -> list[TranslationProblem]:
    tags = [(text, tag) for text, tag in terms(translation)]
    lowered = translation.lower()
    out = []
    if (
        request.mindate
        and not any(tag in _DATE_TAGS for _, tag in tags)
        and not re.search(r"\[(date - publication|dp|pdat)\]", lowered)
    ):
        out.append(
            TranslationProblem(
                code="date_missing",
                message=(f"the publication dates {request.mindate}..{request.maxdate} are not in the translation"),
            )
        )
    wanted_tag = {"title": ("title", "ti"), "title/abstract": ("title/abstract", "tiab")}.get(request.field)
    if (
        wanted_tag
        and request.concepts
        and not all(
            any(covers(f'"{text}"[{tag}]', concept) for text, tag in tags if tag in wanted_tag)
            for concept in request.concepts
        )
    ):
        out.append(
            TranslationProblem(
                code="field_missing",
                message=(f"the request searches the {request.field} only; the translation searches other fields too"),
            )
        )
    for kind in request.publication_types:
        if (
            f'"{kind.lower()}"[publication type]' not in lowered
            and f"{kind.lower()}[pt]" not in lowered
            and f'"{kind.lower()}"[pt]' not in lowered
        ):
            out.append(
                TranslationProblem(
                    code="publication_type_missing",
                    concept=kind,
                    message=f'the publication type "{kind}" is not in the translation',
                )
            )
    for heading in request.population:
        if not any(text == heading.lower() for text, _ in tags):
            out.append(
                TranslationProblem(
                    code="population_missing",
                    concept=heading,
                    message=f'the population "{heading}" is not in the translation',
                )
            )
    return out
