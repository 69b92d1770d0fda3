"""PubMed ids past ESearch's cap: publication-date windows, halved until each holds fewer records than one ESearch
serves, the way EDirect batches a large PubMed query.

For PubMed, ESearch serves only the first 9,999 records of a result set ("The E-utilities In-Depth", ESearch:
`retstart` cannot be larger than 9998, and a `retstart + retmax` past 9,999 is clamped), while `count` still reports
the whole set. A query with more records is cut into `mindate`/`maxdate` windows (`datetype=pdat`): a window whose
count is 10,000 or more is halved, by years while it spans several, then by months, then by days, and each window
under the cap is read with one ESearch (`retmax=9999`). Windows are walked newest first, so a pull capped by
`max_records` keeps the most recent records. A record whose publication date is a span (a season, "1998 Dec-1999
Jan") matches every window the span touches, so ids are de-duplicated across windows. A single day that still holds
10,000 records cannot be split further: that is an error naming the day.

Everything answers as data, like EUtilsClient: a dict with `ids`, or an error record.
"""

from __future__ import annotations

import calendar
import datetime as dt
import logging
from dataclasses import dataclass
from typing import Any

from dagster_project.sources.pubmed.client import EUtilsClient, Record

log = logging.getLogger(__name__)

WINDOW_CAP = 9_999  # the most ids one PubMed ESearch serves
# Well before PubMed's oldest citations, and a year ahead for issues dated next year (ahead-of-print journals).
EARLIEST_YEAR = 1500


def latest_year() -> int:
    return dt.date.today().year + 1


@dataclass(frozen=True)
class Window:
    """A publication-date range, both ends included; always whole years, whole months of one year, or days of one
    month, so that its limits read the way PubMed writes them (YYYY, YYYY/MM, YYYY/MM/DD)."""

    start: dt.date
    end: dt.date

    @classmethod
    def years(cls, first: int, last: int) -> Window:
        return cls(dt.date(first, 1, 1), dt.date(last, 12, 31))

    def limits(self) -> tuple[str, str]:
        """(mindate, maxdate) at the coarsest precision that says exactly this range."""
        a, b = self.start, self.end
        if (a.month, a.day, b.month, b.day) == (1, 1, 12, 31):
            return f"{a.year:04d}", f"{b.year:04d}"
        if a.day == 1 and b.day == calendar.monthrange(b.year, b.month)[1]:
            return f"{a.year:04d}/{a.month:02d}", f"{b.year:04d}/{b.month:02d}"
        return a.strftime("%Y/%m/%d"), b.strftime("%Y/%m/%d")

    def halves(self) -> tuple[Window, Window] | None:
        """Older and newer half, by years, else months, else days; None for a single day."""
        a, b = self.start, self.end
        if a.year != b.year:
            mid = (a.year + b.year) // 2
            return Window(a, dt.date(mid, 12, 31)), Window(dt.date(mid + 1, 1, 1), b)
        if a.month != b.month:
            mid = (a.month + b.month) // 2
            last = calendar.monthrange(a.year, mid)[1]
            return Window(a, dt.date(a.year, mid, last)), Window(dt.date(a.year, mid + 1, 1), b)
        if a.day != b.day:
            mid = (a.day + b.day) // 2
            return Window(a, a.replace(day=mid)), Window(a.replace(day=mid + 1), b)
        return None

    def describe(self) -> str:
        low, high = self.limits()
        return low if low == high else f"{low}..{high}"


def _too_dense(day: Window, count: int) -> Record:
    message = (
        f"PubMed holds {count} records for the query on the single publication day {day.describe()}, and "
        f"ESearch serves at most {WINDOW_CAP} per search; a day cannot be split further"
    )
    return {
        "error": message,
        "tool": "esearch",
        "advice": "narrow FLUX_PUBMED_QUERY (a field tag, a publication type "
        "or a date limit) so that no single day holds 10,000 records",
    }


def search_ids(
    eutils: EUtilsClient, term: str, max_records: int, *, first_year: int = EARLIEST_YEAR, last_year: int | None = None
) -> Record:
    """Up to `max_records` unique PMIDs for `term`: one ESearch when the set (or the cap) fits in one answer, else
    date windows. The answer says how it got them: `count` (the whole set, as NCBI reports it), `windows` (each
    window read, with its count), `esearch_calls` and `duplicates` (ids a second window returned again)."""
    first = eutils.esearch("pubmed", term, retmax=max(1, min(max_records, WINDOW_CAP)))
    if "error" in first:
        return first
    found: dict[str, Any] = {
        "count": first["count"],
        "query_translation": first["query_translation"],
        "windows": [],
        "esearch_calls": 1,
        "duplicates": 0,
        "tool": "esearch",
        **({"warnings": first["warnings"]} if "warnings" in first else {}),
    }
    if first["count"] <= WINDOW_CAP or max_records <= WINDOW_CAP:
        return found | {"ids": first["ids"][:max_records]}

    ids: dict[str, None] = {}  # insertion-ordered set: the order windows found them in
    root = Window.years(first_year, last_year or latest_year())
    halves = root.halves()  # the whole query is over the cap: no need to ask for the root itself
    stack = list(halves) if halves else [root]
    while stack and len(ids) < max_records:
        window = stack.pop()
        mindate, maxdate = window.limits()
        answer = eutils.esearch("pubmed", term, retmax=WINDOW_CAP, mindate=mindate, maxdate=maxdate, datetype="pdat")
        found["esearch_calls"] += 1
        if "error" in answer:
            return answer
        if answer["count"] > WINDOW_CAP:
            split = window.halves()
            if split is None:
                return _too_dense(window, answer["count"])
            stack.extend(split)  # the newer half is popped first
            continue
        found["windows"].append({"mindate": mindate, "maxdate": maxdate, "count": answer["count"]})
        for uid in answer["ids"]:
            if uid in ids:
                found["duplicates"] += 1
            elif len(ids) < max_records:
                ids[uid] = None
    if not stack and len(ids) < min(max_records, found["count"]):
        # Records dated outside the windows' years, or a set that changed while it was read: reported, not fatal.
        found["unreached"] = found["count"] - len(ids)
        log.warning("PubMed date windows %s reached %d of %d records", root.describe(), len(ids), found["count"])
    return found | {"ids": list(ids)}
