"""`flux sources check`: one cheap request per live source, to learn before a first live pull whether each provider
is reachable, accepts Flux's identity and keys, what rate limit applies, and which release it serves.

Each probe is the smallest request the provider documents: Reactome's and KEGG's version endpoints, one free
OpenAlex singleton, one ESearch, the first kilobyte of HGNC's complete set, and a HEAD of ClinVar's gene-condition
file. A probe sends one request, never retries, and turns every failure into a line of the report instead of an
exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dagster_project.core.http import HttpClient, HttpRequestError
from dagster_project.core.settings import FluxSettings
from dagster_project.sources.clinvar import client as clinvar
from dagster_project.sources.hgnc import client as hgnc
from dagster_project.sources.kegg import client as kegg
from dagster_project.sources.openalex import client as openalex
from dagster_project.sources.pubmed import client as eutils
from dagster_project.sources.reactome import client as reactome
from dagster_project.sources.source import SourceSetupError, live_contact_email

PROBE_TIMEOUT = 15.0
NOT_NEEDED = "not needed"


@dataclass(frozen=True)
class SourceCheck:
    source: str
    url: str
    reachable: bool
    identity: str  # "accepted", "refused: …" or NOT_NEEDED
    key: str  # "accepted", "missing: …", "refused: …" or NOT_NEEDED
    rate_limit: str  # what applies, as the provider documents or reports it
    release: str  # what the provider serves now; "" when the probe failed before learning it
    problem: str | None = None  # what failed and the setting to change; None when the source is ready

    @property
    def ok(self) -> bool:
        return self.problem is None


def _client(
    settings: FluxSettings, url: str, provider: str, advice: dict[int, str], secrets: tuple[str | None, ...] = ()
) -> HttpClient:
    return HttpClient(
        url,
        requests_per_second=2,
        contact_email=settings.sources.contact_email,
        timeout=min(settings.sources.http_timeout, PROBE_TIMEOUT),
        max_attempts=1,
        provider=provider,
        advice=advice,
        secrets=secrets,
    )


def _failed(source: str, url: str, exc: Exception, **known: str) -> SourceCheck:
    status = getattr(exc, "status", None)
    fields = {"identity": "unknown", "key": "unknown", "rate_limit": "unknown", "release": ""} | known
    if status == 401 or "API key invalid" in str(exc):
        fields["key"] = "refused"
    if status == 429:
        fields["rate_limit"] = "exceeded (429)"
    return SourceCheck(source, url, reachable=status is not None, problem=str(exc), **fields)


def _keyless_probe(source: str, url: str, fetch_release: Callable[[], str], rate_limit: str) -> SourceCheck:
    """A provider that needs neither identity nor key: reachable when its release call answers."""
    try:
        release = fetch_release()
    except HttpRequestError as exc:
        return _failed(source, url, exc, identity=NOT_NEEDED, key=NOT_NEEDED)
    return SourceCheck(source, url, True, NOT_NEEDED, NOT_NEEDED, rate_limit, release)


def check_reactome(settings: FluxSettings) -> SourceCheck:
    url = settings.sources.reactome_url or reactome.CONTENT_SERVICE
    http = _client(settings, url, "Reactome ContentService", reactome.ADVICE)
    return _keyless_probe(
        "reactome",
        url,
        lambda: f"Reactome v{http.get_text('data/database/version').strip()}",
        "none documented (Flux sends 5/s)",
    )


def check_kegg(settings: FluxSettings) -> SourceCheck:
    url = settings.sources.kegg_url or kegg.BASE_URL
    client = kegg.KeggClient(_client(settings, url, "KEGG REST", kegg.ADVICE))
    return _keyless_probe(
        "kegg", url, lambda: f"KEGG {client.release()}", "about 3 requests/s, 403 beyond (Flux sends 3/s)"
    )


def check_openalex(settings: FluxSettings) -> SourceCheck:
    url = settings.sources.openalex_url or openalex.BASE_URL
    secret = settings.sources.openalex_api_key
    key = secret.get_secret_value().strip() if secret else ""
    if not key:
        return SourceCheck(
            "openalex",
            url,
            False,
            NOT_NEEDED,
            f"missing: set {openalex.KEY_SETTING}",
            "unknown",
            "",
            f"no request sent: live OpenAlex pulls need {openalex.KEY_SETTING}",
        )
    http = _client(settings, url, "OpenAlex", openalex.ADVICE, secrets=(key,))
    try:
        response = http.request("GET", f"works/{openalex.PROBE_WORK}", params={"api_key": key})
    except HttpRequestError as exc:
        return _failed("openalex", url, exc, identity=NOT_NEEDED)
    left = response.headers.get("x-ratelimit-remaining-usd")
    budget = f"${float(left):.4f} of today's budget left" if left else "no usage headers in the answer"
    return SourceCheck(
        "openalex", url, True, NOT_NEEDED, "accepted", f"100 requests/s; {budget}", "continuously updated (no release)"
    )


def check_pubmed(settings: FluxSettings) -> SourceCheck:
    config = settings.sources
    url = config.eutils_url or eutils.EUTILS_BASE_URL
    key = config.ncbi_api_key.get_secret_value() if config.ncbi_api_key else None
    client = eutils.make_eutils_client(
        url, email=config.contact_email, api_key=key, max_attempts=1, timeout=min(config.http_timeout, PROBE_TIMEOUT)
    )
    found = client.esearch("pubmed", config.pubmed_query, retmax=1)
    rate = "10 requests/s (with key)" if key else "3 requests/s (no key; FLUX_NCBI_API_KEY raises it to 10)"
    key_state = "accepted" if key else "none (optional)"
    if "error" in found:
        error = str(found["error"])
        reachable = "connection failed" not in error and "timed out" not in error
        refused = "API key invalid" in error
        identity = "refused" if "FLUX_CONTACT_EMAIL" in found.get("advice", "") else "accepted"
        problem = f"{error}; {found['advice']}" if found.get("advice") else error
        return SourceCheck(
            "pubmed",
            url,
            reachable,
            identity if reachable else "unknown",
            "refused: check FLUX_NCBI_API_KEY" if refused else key_state if reachable else "unknown",
            "exceeded (429)" if found.get("status") == 429 else rate,
            "",
            problem,
        )
    return SourceCheck(
        "pubmed", url, True, "accepted", key_state, rate, f"{found['count']} PubMed records match FLUX_PUBMED_QUERY"
    )


def check_hgnc(settings: FluxSettings) -> SourceCheck:
    url = settings.sources.hgnc_url or hgnc.COMPLETE_SET_URL
    http = _client(settings, url, "HGNC downloads", hgnc.ADVICE)
    try:  # the first kilobyte: the download host honours Range, and the file is some 15 MB
        response = http.request("GET", url, headers={"Range": "bytes=0-1023"})
    except HttpRequestError as exc:
        return _failed("hgnc", url, exc, identity=NOT_NEEDED, key=NOT_NEEDED)
    modified = response.headers.get("Last-Modified", "unknown date")
    return SourceCheck(
        "hgnc", url, True, NOT_NEEDED, NOT_NEEDED, "none documented (Flux sends 2/s)", f"HGNC {modified}"
    )


def check_clinvar(settings: FluxSettings) -> SourceCheck:
    url = settings.sources.clinvar_url or clinvar.GENE_CONDITION_URL
    client = clinvar.ClinvarClient(_client(settings, url, "NCBI ClinVar downloads", clinvar.ADVICE), url)
    return _keyless_probe("clinvar", url, client.release, "none documented (Flux sends 2/s)")


PROBES: dict[str, Callable[[FluxSettings], SourceCheck]] = {
    "reactome": check_reactome,
    "kegg": check_kegg,
    "hgnc": check_hgnc,
    "openalex": check_openalex,
    "pubmed": check_pubmed,
    "clinvar": check_clinvar,
}


def check_sources(settings: FluxSettings, only: list[str] | None = None) -> list[SourceCheck]:
    """One probe per source (or the ones named). The contact address is checked first: without a reachable one,
    no request is sent at all."""
    names = only or list(PROBES)
    try:
        live_contact_email(settings)
    except SourceSetupError as exc:
        return [
            SourceCheck(name, "", False, "refused: set FLUX_CONTACT_EMAIL", "unknown", "unknown", "", str(exc))
            for name in names
        ]
    return [PROBES[name](settings) for name in names]
