"""OpenAlex live pulls against a server that holds them to OpenAlex's documented contract
(tests/support/contracts/openalex.py; developers.openalex.org "Authentication & Pricing", "Page through results",
"Error handling").

Rules and the tests that enforce them: an API key on every request and 401 past the first page without one
(`test_keyless_paging_stops_at_page_two_with_a_message_naming_the_setting`, `test_a_pull_pages_with_the_key_…`);
per_page 1 to 100 (`test_per_page_over_100_is_refused_and_flux_never_asks_for_it`); cursor paging to a null cursor
(`test_a_pull_pages_with_the_key_…`); 429 with Retry-After on a spent budget
(`test_a_spent_budget_fails_with_openalex_s_answer_and_what_to_change`); a wrong key is a 401 whose message never
shows the key (`test_a_wrong_key_is_refused_and_scrubbed_from_the_error`); and Flux's own preconditions: no request
at all without a key or with the placeholder contact address.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.core.settings import FluxSettings
from dagster_project.sources.openalex import client as openalex
from dagster_project.sources.openalex import parser
from dagster_project.sources.openalex.source import SOURCE, MissingApiKeyError
from dagster_project.sources.source import LiveIdentityError
from tests.support.contracts.openalex import OpenAlexContractServer

pytestmark = pytest.mark.shared_data
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
PAGES = sorted((SNAPSHOT / "openalex" / "openalexPro_snapshots").glob("*.json"))
KEY = "oa-test-key-5f2c"
CONTACT = "curator@pathway-lab.org"
if not PAGES:
    pytest.skip(f"recorded OpenAlex pages not found under {SNAPSHOT}", allow_module_level=True)


@pytest.fixture
def server() -> Iterator[OpenAlexContractServer]:
    served = OpenAlexContractServer(PAGES, keys={KEY: 1.0}).start()
    yield served
    served.stop()


def _http(server: OpenAlexContractServer, key: str | None = None) -> HttpClient:
    return HttpClient(
        server.url,
        requests_per_second=1000,
        max_attempts=2,
        backoff_initial=0.01,
        backoff_max=0.05,
        timeout=2.0,
        provider="OpenAlex",
        advice=openalex.ADVICE,
        secrets=(key,),
    )


def _settings(server: OpenAlexContractServer, **overrides: object) -> FluxSettings:
    values: dict[str, object] = {
        "source_mode": "live",
        "openalex_url": server.url,
        "openalex_api_key": KEY,
        "contact_email": CONTACT,
        "openalex_max_records": 1000,
        "http_max_attempts": 2,
        "http_timeout": 2.0,
    }
    return FluxSettings(**(values | overrides))  # type: ignore[arg-type]


def test_a_pull_pages_with_the_key_at_100_per_page_until_the_cursor_runs_out(server: OpenAlexContractServer) -> None:
    pulled = SOURCE.pull_live(_settings(server))
    hits = server.hits("/works")
    assert all(h.query["api_key"] == [KEY] for h in hits)
    assert all(h.query["per_page"] == ["100"] for h in hits) and "mailto" not in hits[0].query
    assert [h.query["cursor"][0] == "*" for h in hits] == [True] + [False] * (len(hits) - 1)
    assert len(hits) == len(server.works) // 100 + 2  # full pages, the last partial one, then an empty page
    assert pulled.requests == len(hits) and server.statuses() == [200] * len(hits)
    records = parser.parse_raw(pulled.files, "raw/openalex")
    assert len(records.papers) == len({p.id for p in records.papers}) == len(server.works)


def test_max_records_bounds_the_pull_and_the_last_page_size(server: OpenAlexContractServer) -> None:
    pulled = SOURCE.pull_live(_settings(server, openalex_max_records=130))
    assert [h.query["per_page"][0] for h in server.hits("/works")] == ["100", "30"]
    assert len(parser.parse_raw(pulled.files, "raw/openalex").papers) == 130


def test_keyless_paging_stops_at_page_two_with_a_message_naming_the_setting(server: OpenAlexContractServer) -> None:
    with pytest.raises(HttpRequestError) as err:
        openalex.OpenAlexClient(_http(server), None).works_pages("has_abstract:true", max_records=500)
    assert server.statuses("/works") == [200, 401]
    message = str(err.value)
    assert message.startswith("OpenAlex: HTTP 401") and "API key required" in message
    assert "set FLUX_OPENALEX_API_KEY" in message and err.value.status == 401


def test_per_page_over_100_is_refused_and_flux_never_asks_for_it(server: OpenAlexContractServer) -> None:
    with pytest.raises(HttpRequestError, match="between 1 and 100"):
        _http(server, KEY).get_json("works", per_page=200, api_key=KEY)
    openalex.OpenAlexClient(_http(server, KEY), KEY).works_pages("has_abstract:true", max_records=500, per_page=200)
    asked = [int(h.query["per_page"][0]) for h in server.hits("/works")[1:]]
    assert asked and max(asked) == 100


def test_a_spent_budget_fails_with_openalex_s_answer_and_what_to_change() -> None:
    server = OpenAlexContractServer(PAGES, keys={KEY: 0.0002}).start()  # two list calls
    try:
        with pytest.raises(HttpRequestError) as err:
            openalex.OpenAlexClient(_http(server, KEY), KEY).works_pages("has_abstract:true", max_records=500)
        assert server.statuses("/works") == [200, 200, 429, 429]  # the 429 is retried once, then reported
        assert "Daily budget exceeded" in str(err.value) and "FLUX_OPENALEX_MAX_RECORDS" in str(err.value)
    finally:
        server.stop()


def test_a_wrong_key_is_refused_and_scrubbed_from_the_error(server: OpenAlexContractServer) -> None:
    wrong = "oa-wrong-key-0000"
    with pytest.raises(HttpRequestError) as err:
        openalex.OpenAlexClient(_http(server, wrong), wrong).work("W2741809807")
    assert err.value.status == 401 and wrong not in str(err.value) and "api_key=***" in str(err.value)


def test_singleton_lookups_are_free(server: OpenAlexContractServer) -> None:
    work_id = server.works[0]["id"].rsplit("/", 1)[-1]
    before = server.budgets[KEY]
    assert openalex.OpenAlexClient(_http(server, KEY), KEY).work(work_id)["id"].endswith(work_id)
    assert server.budgets[KEY] == before


def test_no_request_without_a_key_or_with_the_placeholder_contact(server: OpenAlexContractServer) -> None:
    with pytest.raises(MissingApiKeyError, match="FLUX_OPENALEX_API_KEY"):
        SOURCE.pull_live(_settings(server, openalex_api_key=None))
    with pytest.raises(LiveIdentityError, match="FLUX_CONTACT_EMAIL"):
        SOURCE.pull_live(_settings(server, contact_email="flux@example.org"))
    assert server.requests == []
