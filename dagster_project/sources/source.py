"""What a source folder provides. Each `sources/<name>/source.py` defines one `Source`; the registry lists them,
and the raw and documents assets, their checks and the sensor read everything source-specific from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol

from dagster_project.core.http import HttpClient
from dagster_project.core.settings import FluxSettings
from dagster_project.sources.model import ParseResult
from dagster_project.sources.raw import RawPull


@dataclass(frozen=True)
class Parsed:
    records: ParseResult
    # KEGG gene → UniProt accessions (KEGG's conv file); empty for every other source.
    kegg_uniprot: dict[str, list[str]] = field(default_factory=dict)


class Source(Protocol):
    name: str
    # The files under FLUX_SNAPSHOT_DIR its snapshot pull reads: exactly what the sensor watches.
    snapshot_files: tuple[str, ...]
    # The external ids of its documents (the documents_valid check); None: it loads rows with a check of their own.
    id_pattern: str | None

    def pull_live(self, settings: FluxSettings) -> RawPull: ...

    def pull_snapshot(self, snapshot_dir: Path, era: str = "current") -> RawPull: ...

    def pull_demo(self, demo_dir: Path) -> RawPull: ...

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed: ...


class ClientFileSource:
    """The snapshot and demo pulls of a source whose client module reads them (`snapshot_pull`, `demo_pull`)."""

    client: ModuleType

    def pull_snapshot(self, snapshot_dir: Path, era: str = "current") -> RawPull:
        return self.client.snapshot_pull(snapshot_dir, era)

    def pull_demo(self, demo_dir: Path) -> RawPull:
        return self.client.demo_pull(demo_dir)


class SourceSetupError(ValueError):
    """A live pull that cannot start as configured (no reachable contact, a missing key): no request is sent."""


class SourcePullError(RuntimeError):
    """A live pull that a provider refused or answered with nothing usable, reported as data rather than raised by
    the HTTP client (E-utilities puts its errors in the body). The message names the provider, what it said and the
    setting to change; `status` is the provider's HTTP status when there was one, and `transient` says whether
    another try may succeed (a 5xx, a timeout, a dropped connection)."""

    def __init__(self, message: str, status: int | None = None, *, transient: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


class LiveIdentityError(SourceSetupError):
    """Live mode without a contact address a provider could write to."""


# RFC 2606 / RFC 6761 names that can never receive mail: an address there is a placeholder, not an identity.
_RESERVED_DOMAINS = ("example.org", "example.com", "example.net", "example", "test", "invalid", "localhost")


def live_contact_email(settings: FluxSettings) -> str:
    """The contact address live pulls identify with. NCBI and OpenAlex write to it before they block a client,
    so the placeholder default (or any address at a reserved domain) is refused before the first request."""
    email = settings.sources.contact_email.strip()
    local, _, domain = email.rpartition("@")
    domain = domain.lower()
    reserved = any(domain == d or domain.endswith("." + d) for d in _RESERVED_DOMAINS)
    if not local or "." not in domain or reserved:
        raise LiveIdentityError(
            f"FLUX_CONTACT_EMAIL is {email!r}, which no provider can write to: live mode sends it to NCBI "
            "(E-utilities `email`) and in every User-Agent, and providers contact that address before blocking a "
            "client. Set FLUX_CONTACT_EMAIL to a reachable address of the person or team running Flux "
            "(snapshot and demo modes need none)."
        )
    return email


def http_client(
    settings: FluxSettings,
    base_url: str,
    requests_per_second: float,
    *,
    provider: str,
    advice: dict[int, str] | None = None,
    secrets: tuple[str | None, ...] = (),
) -> HttpClient:
    """The one HTTP client (core/http.py) with the settings' contact, timeout and attempts; its errors name the
    provider and, per status, the setting to change."""
    return HttpClient(
        base_url,
        contact_email=live_contact_email(settings),
        requests_per_second=requests_per_second,
        timeout=settings.sources.http_timeout,
        max_attempts=settings.sources.http_max_attempts,
        provider=provider,
        advice=advice,
        secrets=secrets,
    )
