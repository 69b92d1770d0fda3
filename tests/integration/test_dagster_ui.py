"""The Dagster UI as a data engineer opens it, in a real browser: `dagster-webserver` on the test instance and the
stack's code server (the workspace `make dagster` reads), Debian's chromium driven by Playwright. The asset page of
the dbt mart `pathway_equivalences` shows its owner, its tags, its row count and typed columns with their lineage; a
Python asset's page links to its file and line; a release-history asset lists its release partitions; the Overview
timeline lists the runs that went through the code location; a run's page shows the settings its command gave.
Screenshots go to <FLUX_HOME>/screenshots/dagster-ui."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from dagster_project.defs.materialize import launch_selection, materialize_selection
from tests.support.browser import chromium
from tests.support.location import location_env
from tests.support.ports import free_port
from tests.support.tables import row_count

pytestmark = pytest.mark.slow  # a webserver and a browser: `make test-extended`

START_TIMEOUT_S = 180


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def launched_run(stack: FluxSettings) -> str:
    """One run through the stack's code location (on the session's databases: a run cannot move the location's
    connections to the demo's), so the timeline has one with the location's origin; its command changed one run
    setting, which the run carries."""
    outcome = launch_selection(stack.evolve(churn_max_genes_lost=0.5), "group:platform", trigger="test")
    assert outcome.success
    return outcome.run_id


@pytest.fixture(scope="module")
def webserver(
    stack: FluxSettings, demo_platform: FluxSettings, launched_run: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    port = free_port()
    log = (tmp_path_factory.mktemp("webserver") / "webserver.log").open("w")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dagster-webserver"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-w",
            str(stack.dagster_home / "workspace.yaml"),  # the stack's code server, as `make dagster` reads it
        ],
        cwd=REPO_ROOT,
        env=location_env(demo_platform),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while not _up(url):
            assert process.poll() is None, f"dagster-webserver exited (see {log.name})"
            assert time.monotonic() < deadline, f"dagster-webserver did not answer in {START_TIMEOUT_S} s"
            time.sleep(1)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def page(webserver: str) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        tab = context.new_page()
        tab.set_default_timeout(120_000)
        yield tab
        context.close()


@pytest.fixture(scope="module")
def shots(demo_platform: FluxSettings) -> Path:
    folder = demo_platform.home / "screenshots" / "dagster-ui"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(page: Any, url: str, waits_for: str) -> str:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_text(waits_for, exact=False).first).to_be_visible(timeout=120_000)
    page.wait_for_load_state("networkidle")
    return page.locator("body").inner_text()


def _dismiss_dialogs(page: Any) -> None:
    """The webserver's first-visit newsletter dialog would cover the page in a screenshot."""
    skip = page.get_by_role("button", name="Skip")
    if skip.count():
        skip.first.click()


def test_a_dbt_mart_page_shows_owner_tags_row_count_and_typed_columns(
    page: Any, webserver: str, shots: Path, demo_platform: FluxSettings
) -> None:
    body = _open(page, f"{webserver}/assets/pathway_equivalences", "Columns")
    _dismiss_dialogs(page)
    page.screenshot(path=shots / "asset-pathway_equivalences.png", full_page=True)
    assert "Owners\nanalytics" in body, "owner team:analytics"
    assert "layer: dbt" in body and "tier: pipeline" in body
    assert f"Row count\n{row_count(demo_platform, 'analytics.pathway_equivalences')}\n" in body
    assert "Open dbt.py in editor" in body or "dbt.py" in body, "the code reference"
    columns = page.locator("table").filter(has_text="Column name").first.inner_text()
    for column, kind in (("reactome_id", "text"), ("jaccard", "double precision"), ("shared", "integer")):
        assert re.search(rf"^{column}\s+{kind}\b", columns, re.MULTILINE), (column, kind, columns[:600])


def test_a_python_asset_page_links_to_its_code(page: Any, webserver: str, shots: Path) -> None:
    body = _open(page, f"{webserver}/assets/pathway_resolution", "Source code")
    _dismiss_dialogs(page)
    page.screenshot(path=shots / "asset-pathway_resolution.png", full_page=True)
    assert "Owners\nknowledge-graph" in body and "layer: graph" in body and "tier: serving" in body
    assert "resolution.py" in body, "the code reference names the defining file"


def test_the_release_history_lists_each_release_as_a_partition(
    page: Any, webserver: str, shots: Path, demo_platform: FluxSettings
) -> None:
    from dagster_project.releases.history import raw_releases

    (release,) = raw_releases("kegg", demo_platform.raw_root_path)
    assert materialize_selection(demo_platform, "key:kegg_release_history", partition=release.partition).success
    body = _open(page, f"{webserver}/assets/kegg_release_history?view=partitions", "Partitions Selected")
    _dismiss_dialogs(page)
    digest = release.partition.rsplit("#", 1)[1]
    assert f"#{digest}" in body and "Materialized (1)" in body and "Missing (0)" in body, body[:1500]
    page.get_by_text(f"#{digest}").first.click()
    details = _visible(page, "compared_with")
    page.screenshot(path=shots / "asset-kegg_release_history.png", full_page=True)
    assert "none (the first release in the raw zone)" in details and release.manifest.release in details


def test_the_overview_timeline_lists_runs_of_the_code_location(page: Any, webserver: str, shots: Path) -> None:
    body = _open(page, f"{webserver}/overview/activity/timeline", "Timeline")
    _dismiss_dialogs(page)
    page.screenshot(path=shots / "overview-timeline.png", full_page=True)
    # The asset job's runs are listed under the location as Dagster names them (in-process runs have no location).
    assert "No runs or scheduled ticks" not in body and "flux\n" in body, body[:1500]
    assert "Jobless asset materializations" in body


def _visible(page: Any, waits_for: str) -> str:
    from playwright.sync_api import expect

    expect(page.get_by_text(waits_for, exact=False).first).to_be_visible(timeout=60_000)
    return page.locator("body").inner_text()


def test_a_run_page_shows_the_settings_its_command_gave(
    page: Any, webserver: str, launched_run: str, shots: Path
) -> None:
    _open(page, f"{webserver}/runs/{launched_run}", "View tags and config")
    _dismiss_dialogs(page)
    page.get_by_text("View tags and config").first.click()
    body = _visible(page, "flux/setting/FLUX_CHURN_MAX_GENES_LOST")
    page.wait_for_timeout(1000)  # the dialog fades in
    page.screenshot(path=shots / "run-carried-settings.png", full_page=False)
    assert "flux/trigger" in body and "flux/source_mode" in body, body[:2000]
    assert re.search(r"flux/setting/FLUX_CHURN_MAX_GENES_LOST\W+0\.5\b", body), body[:2000]
