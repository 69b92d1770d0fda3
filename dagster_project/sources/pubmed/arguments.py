"""What E-utilities accept, checked before a request is sent: databases, integers in their documented bounds, dates,
id lists and search terms with their field tags.

NCBI answers some bad arguments with an error and silently misreads others (an unknown `[tag]` is searched as text
in all fields, a `mindate` without `maxdate` is ignored), so both kinds are refused here, with a message naming the
argument, and no request is spent on them. Field tags are checked against the fields EInfo lists for the database
(and the short forms PubMed Help documents for them: "Search Field Descriptions and Tags").
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence

VALID_DBS = frozenset(
    {
        "pubmed",
        "pmc",
        "gene",
        "protein",
        "nuccore",
        "nucleotide",
        "mesh",
        "taxonomy",
        "structure",
        "genome",
        "assembly",
        "biosample",
        "bioproject",
        "sra",
        "snp",
        "clinvar",
        "dbvar",
        "gds",
        "geoprofiles",
        "homologene",
        "books",
        "omim",
        "medgen",
        "gtr",
        "cdd",
        "popset",
        "ipg",
        "nlmcatalog",
        "pccompound",
        "pcsubstance",
        "pcassay",
    }
)
DATETYPES = frozenset({"pdat", "edat", "mdat"})
_DATE_RE = re.compile(r"^(\d{4})(?:/(\d{2})(?:/(\d{2}))?)?$")
_TAG_RE = re.compile(r"\[([^\[\]]+)\]")
# PubMed Help's short tags → the EInfo field each searches (EInfo lists fields by name and full name only).
PUBMED_TAG_FIELDS = {
    "ti": "TITL",
    "title": "TITL",
    "tiab": "TIAB",
    "title/abstract": "TIAB",
    "ab": "TIAB",
    "mh": "MESH",
    "mesh": "MESH",
    "mesh terms": "MESH",
    "mesh terms:noexp": "MESH",
    "mh:noexp": "MESH",
    "majr": "MAJR",
    "mesh major topic": "MAJR",
    "au": "AUTH",
    "author": "AUTH",
    "1au": "FAUT",
    "lastau": "LAUT",
    "ta": "JOUR",
    "journal": "JOUR",
    "dp": "PDAT",
    "pdat": "PDAT",
    "publication date": "PDAT",
    "date - publication": "PDAT",
    "edat": "EDAT",
    "crdt": "CRDT",
    "pt": "PTYP",
    "publication type": "PTYP",
    "la": "LANG",
    "language": "LANG",
    "ad": "AFFL",
    "affiliation": "AFFL",
    "tw": "WORD",
    "text word": "WORD",
    "all fields": "ALL",
    "all": "ALL",
    "sh": "SUBH",
    "subheading": "SUBH",
    "nm": "SUBS",
    "sb": "FILT",
    "filter": "FILT",
    "uid": "UID",
    "pmid": "UID",
    "ot": "OTRM",
    "gr": "GRNT",
    "vi": "VOL",
    "ip": "ISS",
    "pg": "PAGE",
    "si": "SI",
    "mhda": "MHDA",
}


class InvalidArgument(ValueError):
    """An argument NCBI would reject (or silently misread); the message names the argument."""


def check_db(value: object, name: str = "db") -> str:
    if not isinstance(value, str) or value.strip().lower() not in VALID_DBS:
        raise InvalidArgument(f"{name} must be one of {sorted(VALID_DBS)}, got {value!r}")
    return value.strip().lower()


def check_int(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f">= {low}"
        raise InvalidArgument(f"{name} must be {bounds}, got {value}")
    return value


def parse_date(value: object, name: str) -> tuple[int, int | None, int | None]:
    match = _DATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidArgument(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD, got {value!r}")
    year, month, day = (int(part) if part else None for part in match.groups())
    try:
        dt.date(year or 1, month or 1, day or 1)
    except ValueError:
        raise InvalidArgument(f"{name} is not a real date: {value!r}") from None
    return year or 1, month, day


def check_dates(mindate: str | None, maxdate: str | None, datetype: str | None) -> dict[str, str]:
    if (mindate is None) != (maxdate is None):
        missing = "maxdate" if maxdate is None else "mindate"
        raise InvalidArgument(f"mindate and maxdate must be given together; {missing} is missing")
    if datetype is not None and datetype not in DATETYPES:
        raise InvalidArgument(f"datetype must be one of {sorted(DATETYPES)}, got {datetype!r}")
    if mindate is None or maxdate is None:
        if datetype is not None:
            raise InvalidArgument("datetype needs mindate and maxdate")
        return {}
    low_y, low_m, low_d = parse_date(mindate, "mindate")
    high_y, high_m, high_d = parse_date(maxdate, "maxdate")
    if (low_y, low_m or 1, low_d or 1) > (high_y, high_m or 12, high_d or 31):
        raise InvalidArgument(f"mindate {mindate!r} is after maxdate {maxdate!r}")
    return {"mindate": mindate, "maxdate": maxdate, "datetype": datetype or "pdat"}


def check_ids(ids: object, limit: int) -> str:
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        raise InvalidArgument(f"ids must be a list of numeric UIDs, got {type(ids).__name__}")
    if not ids:
        raise InvalidArgument("ids must not be empty")
    if len(ids) > limit:
        raise InvalidArgument(f"ids has {len(ids)} entries; at most {limit} are allowed")
    cleaned = []
    for uid in ids:
        text = str(uid).strip() if isinstance(uid, str | int) and not isinstance(uid, bool) else ""
        if not (text.isascii() and text.isdigit()):
            raise InvalidArgument(f"ids must contain digits only, got {uid!r}")
        cleaned.append(text)
    return ",".join(cleaned)


def check_term(term: object) -> str:
    if not isinstance(term, str) or not term.strip():
        raise InvalidArgument("term must be a non-empty search string")
    return term.strip()


def field_tags(term: str) -> list[str]:
    """The `[tag]`s a search term uses, as written."""
    return _TAG_RE.findall(term)


def unknown_field_tags(term: str, fields: Iterable[tuple[str, str]]) -> list[str]:
    """The `[tag]`s of `term` that name no field of the database: not an EInfo field name or full name (`fields`
    are (name, full name) pairs), nor a short form PubMed Help documents for one. `[tag:noexp]` and `[tag:~N]`
    (proximity) are forms of their tag."""
    pairs = list(fields)
    names = {part.lower() for pair in pairs for part in pair}
    codes = {name for name, _ in pairs}
    unknown = []
    for tag in field_tags(term):
        bare = tag.strip().lower()
        base = bare.split(":", 1)[0]
        if bare in names or base in names:
            continue
        code = PUBMED_TAG_FIELDS.get(bare) or PUBMED_TAG_FIELDS.get(base)
        if code is None or code not in codes:
            unknown.append(tag)
    return unknown


def check_field_tags(term: str, fields: Iterable[tuple[str, str]]) -> None:
    """Refuse a term with a `[tag]` the database does not have (PubMed would search its words in all fields)."""
    unknown = unknown_field_tags(term, fields)
    if unknown:
        written = ", ".join(f"[{t}]" for t in unknown)
        raise InvalidArgument(
            f"unknown field tag{'s' if len(unknown) > 1 else ''} {written}: "
            "PubMed would search the words in all fields instead; use a tag EInfo lists, such as "
            "[ti], [tiab], [mh], [au], [dp] or [pt]"
        )
