"""The page's files as served: open (no key), strict CSP, small, nothing fetched from another origin."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from dagster_project.core.settings import FluxSettings
from serving.api import create_app
from serving.web import WEB_DIR

MAX_ASSET_BYTES = 200 * 1024


@pytest.fixture
def client() -> TestClient:
    # With API keys: the page and its files must still load (they hold no data), and nothing else may.
    return TestClient(create_app(FluxSettings(api_keys="flux_unit_key", log_queries_to_mlflow=False)))


def test_the_page_is_served_without_a_key_under_a_strict_content_security_policy(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
        assert client.get(asset).status_code == 200, asset
    assert client.get("/static/../api.py").status_code == 404
    assert client.post("/search", json={"question": "glycolysis"}).status_code == 401  # the API is still locked


def test_page_assets_are_small_and_load_nothing_from_elsewhere() -> None:
    files = sorted(WEB_DIR.iterdir())
    assert {f.name for f in files} >= {"index.html", "flux-io.js", "flux-answer.js", "flux.js", "flux.css"}
    for path in files:
        text = path.read_text()
        assert path.stat().st_size < MAX_ASSET_BYTES, f"{path.name} is {path.stat().st_size} bytes"
        # Links to the sources' pages are data (from answers), never something the page loads.
        assert not re.search(r'(src|href)\s*=\s*["\']https?://', text), f"{path.name} loads from another origin"
        assert "innerHTML" not in text, f"{path.name}: service data goes on the page as text only"
