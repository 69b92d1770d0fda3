"""Live pulls identify with a reachable contact or do not start; provider errors that another try cannot mend fail
the raw asset at once, naming the provider, what it said and the setting to change."""

from __future__ import annotations

import dagster as dg
import pytest

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.core.settings import FluxSettings
from dagster_project.defs.assets.raw_pulls import _pull
from dagster_project.sources import registry
from dagster_project.sources.reactome import client as reactome
from dagster_project.sources.source import LiveIdentityError, SourcePullError, live_contact_email
from tests.support.fault_server import FaultServer, Reply


def _settings(**overrides: object) -> FluxSettings:
    return FluxSettings(**overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "email",
    [
        "flux@example.org",
        "me@lab.example.com",
        "ops@pipeline.test",
        "a@b.invalid",
        "root@localhost",
        "no-at-sign.org",
        "@pathway-lab.org",
        "x@nodot",
    ],
)
def test_placeholder_and_unreachable_addresses_are_refused(email: str) -> None:
    with pytest.raises(LiveIdentityError, match="FLUX_CONTACT_EMAIL"):
        live_contact_email(_settings(contact_email=email))


def test_a_reachable_address_is_the_identity() -> None:
    assert live_contact_email(_settings(contact_email=" curator@pathway-lab.org ")) == "curator@pathway-lab.org"


def test_live_mode_sends_nothing_with_the_placeholder_and_demo_mode_needs_no_contact(fault_server: FaultServer) -> None:
    live = _settings(
        source_mode="live",
        kegg_url=fault_server.url,
        reactome_url=fault_server.url,
        reactome_download_url=fault_server.url,
        hgnc_url=fault_server.url,
    )
    for source in ("kegg", "reactome", "hgnc"):
        with pytest.raises(LiveIdentityError):
            registry.pull(source, live)
    assert fault_server.requests == []
    assert registry.pull("kegg", _settings(source_mode="demo")).files  # the placeholder is fine offline


def test_a_refusal_fails_the_asset_without_retries_and_a_5xx_or_429_is_left_to_the_retry_policy(
    fault_server: FaultServer,
) -> None:
    with pytest.raises(dg.Failure) as setup:
        _pull("kegg", _settings(source_mode="live", kegg_url=fault_server.url))
    assert not setup.value.allow_retries and "FLUX_CONTACT_EMAIL" in str(setup.value.description)

    fault_server.default("/data/database/version", Reply.error(415, body='{"code":415,"reason":"Unsupported"}'))
    fault_server.default("/data/query/ids", Reply.error(503))
    fault_server.default("/data/discover", Reply.error(429, retry_after="0"))
    http = HttpClient(
        fault_server.url,
        requests_per_second=1000,
        max_attempts=2,
        backoff_initial=0.01,
        backoff_max=0.02,
        provider="Reactome ContentService",
        advice=reactome.ADVICE,
    )

    class Refused:
        def pull_live(self, settings: FluxSettings) -> object:
            return http.get_text("data/database/version")

    class Unavailable:
        def pull_live(self, settings: FluxSettings) -> object:
            return http.get_text("data/query/ids")

    class Throttled:
        def pull_live(self, settings: FluxSettings) -> object:
            return http.get_text("data/discover")

    live = _settings(source_mode="live", contact_email="curator@pathway-lab.org")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(registry.SOURCES, "reactome", Refused())
        with pytest.raises(dg.Failure) as refused:
            _pull("reactome", live)
        assert not refused.value.allow_retries
        description = str(refused.value.description)
        assert description.startswith("reactome: Reactome ContentService: HTTP 415")
        assert "Unsupported" in description and "FLUX_REACTOME_URL" in description
        mp.setitem(registry.SOURCES, "reactome", Unavailable())
        with pytest.raises(HttpRequestError) as unavailable:
            _pull("reactome", live)
        assert unavailable.value.status == 503 and unavailable.value.attempts == 2
        mp.setitem(registry.SOURCES, "reactome", Throttled())
        with pytest.raises(HttpRequestError) as throttled:  # the step's retry delay outlasts the rate window
            _pull("reactome", live)
        assert throttled.value.status == 429 and throttled.value.attempts == 2


def test_pubmed_errors_as_data_keep_the_same_split(fault_server: FaultServer) -> None:
    """E-utilities answers most failures as data; a 5xx or 429 behind them is still left to the retry policy and a
    400 (here: an unknown API key, in NCBI's JSON error shape) fails the asset at once."""
    live = _settings(
        source_mode="live",
        contact_email="curator@pathway-lab.org",
        eutils_url=fault_server.url,
        http_max_attempts=1,
        pubmed_max_records=5,
    )
    fault_server.default("/esearch.fcgi", Reply.error(503))
    with pytest.raises(SourcePullError) as unavailable:
        _pull("pubmed", live)
    assert unavailable.value.transient and unavailable.value.status == 503
    fault_server.default("/esearch.fcgi", Reply.error(400, body='{"error":"API key invalid"}'))
    with pytest.raises(dg.Failure) as refused:
        _pull("pubmed", live)
    assert not refused.value.allow_retries and "API key invalid" in str(refused.value.description)
