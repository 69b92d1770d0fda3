"""OpenAlex pulls: /works with a filter and cursor paging in the polite pool (live), snapshot pages, or demo."""

from __future__ import annotations

import json
from pathlib import Path

from dagster_project.core.http import HttpClient
from dagster_project.sources.raw import RawPull, read_files

BASE_URL = "https://api.openalex.org"
SNAPSHOT_FILES = [
    "openalex/openalexPro_snapshots/works_doi_filter_chunk1_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk2_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk3_page1.json",
    "openalex/openalexPro_snapshots/works_doi_filter_chunk4_page1.json",
    "openalex/openalexPro_snapshots/works_keypaper_page1.json",
    "openalex/fixtures/W2741809807.json",
]


class OpenAlexClient:
    def __init__(self, http: HttpClient, mailto: str) -> None:
        self.http = http
        self.mailto = mailto

    def works_pages(self, filter_expr: str, max_records: int, per_page: int = 200) -> list[bytes]:
        """Cursor paging until `max_records` or the last page; each page is kept verbatim for the raw zone."""
        pages: list[bytes] = []
        cursor, seen = "*", 0
        while cursor and seen < max_records:
            body = self.http.get_json("works", filter=filter_expr, cursor=cursor,
                                      **{"per-page": min(per_page, max_records - seen), "mailto": self.mailto})
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


def snapshot_pull(snapshot_dir: Path) -> RawPull:
    return RawPull("openalex", read_files(snapshot_dir, SNAPSHOT_FILES), release="OpenAlex snapshot pages")


def demo_pull(demo_dir: Path) -> RawPull:
    return RawPull("openalex", read_files(demo_dir / "openalex", ["works_page1.json"]),
                   release="Flux demo (OpenAlex /works format)")
