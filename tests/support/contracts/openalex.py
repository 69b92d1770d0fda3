"""The OpenAlex API as its developer documentation describes it (developers.openalex.org), served from recorded
/works pages.

What it enforces, and where each rule comes from:
- "Authentication & Pricing": an `api_key` query parameter, required since 2026-02-13. Without one a client gets
  a tiny daily budget and cannot cursor past the first page: 401. An unknown key: 401.
- "Page through results": `per_page` is 1 to 100 (anything else: 400 with the documented error body
  `{"error": …, "message": …}`); cursor paging starts at `cursor=*`, follows `meta.next_cursor`, and ends when it is
  null. The cursor is opaque: one the server did not issue is a 400.
- "Authentication & Pricing" / "Error handling": a list call costs $0.0001 of the key's daily budget ($1 with a free
  key); a spent budget answers 429 with Retry-After (seconds to midnight UTC); over 100 requests per second answers
  403. Every answer carries the usage headers `x-ratelimit-cost-usd`, `x-ratelimit-remaining-usd` and
  `x-ratelimit-reset`. Singleton lookups (`/works/W…`) are free.
- The retired `mailto` polite-pool parameter is recorded, not required.

Payloads: the works of the recorded openalexPro pages (`openalex/openalexPro_snapshots/`), served 1..per_page at a
time in the recorded `meta` shape.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.contract_server import ContractServer, RateWindow, RecordedRequest, Reply

LIST_COST = 0.0001
FILTER = re.compile(r"^[a-z_.]+:[^,]+(,[a-z_.]+:[^,]+)*$")


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})})


def _error(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    return _json(status, {"error": error, "message": message}, headers)


def _seconds_to_midnight() -> int:
    now = datetime.now(UTC)
    return int((datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC) - now).total_seconds())


class OpenAlexContractServer(ContractServer):
    provider = "OpenAlex"

    def __init__(self, pages: list[Path], *, keys: dict[str, float] | None = None) -> None:
        """`keys`: each accepted API key and its daily budget in US dollars (a free key has $1.00)."""
        super().__init__()
        works: dict[str, dict] = {}
        for page in pages:
            for work in json.loads(page.read_text())["results"]:
                if isinstance(work, dict) and isinstance(work.get("id"), str):
                    works.setdefault(work["id"], work)
        self.works = list(works.values())
        self.budgets = dict(keys or {})
        self.keyless_budget = 0.01
        self.window = RateWindow(100)

    def _cursor(self, offset: int) -> str:
        return base64.urlsafe_b64encode(json.dumps([offset, "flux-contract"]).encode()).decode()

    def _offset(self, cursor: str) -> int | None:
        if cursor == "*":
            return 0
        try:
            offset, tag = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        except (ValueError, TypeError):
            return None
        return offset if tag == "flux-contract" and isinstance(offset, int) else None

    def serve(self, request: RecordedRequest) -> Reply:
        query = {k: v[0] for k, v in request.query.items()}
        key = query.get("api_key")
        if not self.window.admit(key or "keyless"):
            return _error(403, "Forbidden", "Rate limit exceeded: at most 100 requests per second.")
        if key is not None and key not in self.budgets:
            return _error(
                401, "Invalid API key", "The api_key is not valid. Get a key at https://openalex.org/settings/api"
            )
        if request.method != "GET":
            return _error(405, "Method not allowed", "Use GET.")
        if match := re.fullmatch(r"/works/(W\d+)", request.path):
            return self._singleton(match.group(1), key)
        if request.path == "/works":
            return self._list(query, key)
        return _error(404, "Not found", f"{request.path} is not an OpenAlex endpoint.")

    def _usage(self, key: str | None, cost: float) -> dict[str, str]:
        remaining = self.budgets[key] if key else self.keyless_budget
        return {
            "x-ratelimit-cost-usd": f"{cost:.4f}",
            "x-ratelimit-remaining-usd": f"{remaining:.4f}",
            "x-ratelimit-reset": str(_seconds_to_midnight()),
        }

    def _singleton(self, work_id: str, key: str | None) -> Reply:
        work = next((w for w in self.works if w["id"].endswith("/" + work_id)), None)
        if work is None:
            return _error(404, "Not found", f"Work {work_id} not found", self._usage(key, 0.0))
        return _json(200, work, self._usage(key, 0.0))

    def _list(self, query: dict[str, str], key: str | None) -> Reply:
        per_page_raw = query.get("per_page", query.get("per-page", "25"))
        if not per_page_raw.isdigit() or not 1 <= int(per_page_raw) <= 100:
            return _error(
                400,
                "Invalid query parameters error.",
                f"per_page is {per_page_raw}, but it must be an integer between 1 and 100.",
            )
        if "filter" in query and not FILTER.match(query["filter"]):
            return _error(400, "Invalid filter", f"Invalid filter: {query['filter']}")
        offset = self._offset(query.get("cursor", "*"))
        if offset is None:
            return _error(400, "Invalid query parameters error.", "cursor is not a cursor this API issued.")
        if offset > 0 and key is None:
            return _error(
                401,
                "API key required",
                "Paging past the first page needs an API key (free at https://openalex.org/settings/api).",
            )
        if (self.budgets[key] if key else self.keyless_budget) < LIST_COST:
            return _error(
                429,
                "Too Many Requests",
                "Daily budget exceeded for this key.",
                {"Retry-After": str(_seconds_to_midnight()), **self._usage(key, 0.0)},
            )
        if key:
            self.budgets[key] -= LIST_COST
        else:
            self.keyless_budget -= LIST_COST
        per_page = int(per_page_raw)
        results = self.works[offset : offset + per_page]
        following = offset + per_page
        meta = {
            "count": len(self.works),
            "db_response_time_ms": 41,
            "page": None,
            "per_page": per_page,
            "next_cursor": self._cursor(following) if results else None,
            "groups_count": None,
        }
        return _json(200, {"meta": meta, "results": results, "group_by": []}, self._usage(key, LIST_COST))
