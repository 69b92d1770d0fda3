"""OpenAlex pulls: /works with a filter, an API key and cursor paging (live), snapshot pages, or the demo.

The contract (developers.openalex.org, "Authentication & Pricing" and "Page through results"): an `api_key` query
parameter is required since 2026-02-13 (a keyless client has a tiny daily budget and cannot cursor past the first
page); `per_page` is 1 to 100; cursor paging starts at `cursor=*` and ends when `meta.next_cursor` is null. Singleton
lookups (/works/W…) are free; list pages cost budget, so a pull asks for 100 per page. The retired `mailto` polite
pool parameter is not sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from dagster_project.core.http import HttpClient
from dagster_project.sources.raw import RawPull, read_files

BASE_URL = "https://api.openalex.org"
PROBE_WORK = "W2741809807"  # a stable work for `flux sources check`: singleton lookups cost no budget
PER_PAGE_MAX = 100  # "per_page: 1-100" (Page through results)
KEY_SETTING = "FLUX_OPENALEX_API_KEY"
ADVICE = {
    401: f"OpenAlex requires an API key (free at openalex.org/settings/api): set {KEY_SETTING}",
    403: "OpenAlex refused the request (over 100 requests/s, or the key is not allowed this endpoint): "
    f"check {KEY_SETTING}",
    429: "the day's OpenAlex budget for this key is spent (it renews at midnight UTC; x-ratelimit-reset says "
    "when): wait, or lower FLUX_OPENALEX_MAX_RECORDS",
    400: "OpenAlex rejected the query: check FLUX_OPENALEX_FILTER",
}
SNAPSHOT_FILES = [
    "openalex/openalexPro_snapshots/works_doi_filter_chunk1_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk2_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk3_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk4_page1.json",
    "openalex/openalexPro_snapshots/works_keypaper_page1.json",
    "openalex/fixtures/W2741809807.json",
]


class OpenAlexClient:
    def __init__(self, http: HttpClient, api_key: str | None) -> None:
        self.http = http
        self.api_key = api_key

    def _key(self) -> dict[str, str]:
        return {"api_key": self.api_key} if self.api_key else {}

    def work(self, work_id: str) -> dict:
        """One work by id: a singleton lookup, which OpenAlex does not charge against the day's budget."""
        return self.http.get_json(f"works/{work_id}", **self._key())

    def works_pages(self, filter_expr: str, max_records: int, per_page: int = PER_PAGE_MAX) -> list[bytes]:
        """Cursor paging until `max_records` or the last page; each page is kept verbatim for the raw zone."""
        per_page = max(1, min(per_page, PER_PAGE_MAX))
        pages: list[bytes] = []
        cursor, seen = "*", 0
        while cursor and seen < max_records:
            body = self.http.get_json(
                "works", filter=filter_expr, cursor=cursor, per_page=min(per_page, max_records - seen), **self._key()
            )
            pages.append(json.dumps(body).encode())
            seen += len(body.get("results") or [])
            cursor = (body.get("meta") or {}).get("next_cursor")
            if not body.get("results"):
                break
        return pages

    def pull(self, filter_expr: str, max_records: int) -> RawPull:
        pages = self.works_pages(filter_expr, max_records)
        files = {f"works_page{i + 1}.json": page for i, page in enumerate(pages)}
        return RawPull("openalex", files, release=f"OpenAlex works filter={filter_expr}")


def snapshot_pull(snapshot_dir: Path, era: str = "current") -> RawPull:
    """One edition for every era."""
    return RawPull("openalex", read_files(snapshot_dir, SNAPSHOT_FILES), release="OpenAlex snapshot pages")


def demo_pull(demo_dir: Path) -> RawPull:
    return RawPull(
        "openalex",
        read_files(demo_dir / "openalex", ["works_page1.json"]),
        release="Flux demo (OpenAlex /works format)",
    )
