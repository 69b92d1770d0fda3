"""OpenAlex as a Source: the works API with an API key (live), the openalexPro snapshot pages, or the demo."""

from __future__ import annotations

from dagster_project.core.settings import FluxSettings
from dagster_project.sources import ids
from dagster_project.sources.openalex import client, parser
from dagster_project.sources.raw import RawPull
from dagster_project.sources.source import ClientFileSource, Parsed, SourceSetupError, http_client


class MissingApiKeyError(SourceSetupError):
    """A live OpenAlex pull without FLUX_OPENALEX_API_KEY: refused before the first request."""


def openalex_api_key(settings: FluxSettings) -> str:
    """The key live pulls page with; without one OpenAlex answers the first page and 401s the next."""
    key = settings.sources.openalex_api_key
    if key is None or not key.get_secret_value().strip():
        raise MissingApiKeyError(
            f"live OpenAlex pulls need {client.KEY_SETTING}: OpenAlex requires an API key since 2026-02-13 and "
            "refuses cursor paging without one. Get a free key at https://openalex.org/settings/api and set "
            f"{client.KEY_SETTING} (or pull OpenAlex in snapshot or demo mode)."
        )
    return key.get_secret_value().strip()


class OpenAlexSource(ClientFileSource):
    name = "openalex"
    client = client
    snapshot_files = tuple(client.SNAPSHOT_FILES)
    id_pattern = ids.OPENALEX_WORK.pattern

    def pull_live(self, settings: FluxSettings) -> RawPull:
        config = settings.sources
        key = openalex_api_key(settings)
        # Far under OpenAlex's 100 requests/s: a list page costs budget, not time, so speed buys nothing.
        api = http_client(
            settings,
            config.openalex_url or client.BASE_URL,
            5,
            provider="OpenAlex",
            advice=client.ADVICE,
            secrets=(key,),
        )
        pulled = client.OpenAlexClient(api, key).pull(config.openalex_filter, config.openalex_max_records)
        pulled.requests = api.attempts
        return pulled

    def parse(self, files: dict[str, bytes], raw_ref: str) -> Parsed:
        return Parsed(parser.parse_raw(files, raw_ref))


SOURCE = OpenAlexSource()
