"""End to end, as a newcomer runs it: `make run`'s commands (`flux stack up`, `flux materialize`, `flux summary`,
`flux ask`) in a fresh FLUX_HOME on ports of its own, then `flux serve` and the sample question over HTTP.
Everything runs as separate processes from the command line; nothing is imported from the test session."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagster_project.core.settings import REPO_ROOT
from tests.support.ports import free_port

SAMPLE_QUESTION = re.search(r"^SAMPLE_QUESTION \?= (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M).group(1)
FLUX = [sys.executable, "-m", "serving.cli"]


@pytest.fixture(scope="module")
def fresh_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a new machine: only FLUX_HOME and ports chosen here, no FLUX_ variable of the session."""
    home = tmp_path_factory.mktemp("e2e-home")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("FLUX_", "DAGSTER_", "RAY_ADDRESS"))}
    env |= {"FLUX_HOME": str(home), "FLUX_PG_PORT": str(free_port()), "FLUX_NEO4J_BOLT_PORT": str(free_port()),
            "FLUX_REDIS_PORT": str(free_port()), "FLUX_SERVE_PORT": str(free_port()), "FLUX_RAY_NUM_CPUS": "2"}
    try:
        yield env
    finally:
        subprocess.run([*FLUX, "stack", "down"], env=env, cwd=REPO_ROOT, capture_output=True, timeout=180)


def _flux(env: dict[str, str], *args: str, timeout: int = 900) -> str:
    result = subprocess.run([*FLUX, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"flux {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def _post(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 200
        return json.loads(response.read())


def _wait_healthy(base: str, server: subprocess.Popen[bytes], deadline_s: float = 180) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert server.poll() is None, "flux serve exited"
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"flux serve did not answer /health within {deadline_s} s")


def test_make_run_then_the_sample_question_over_http(fresh_home: dict[str, str]) -> None:
    env = fresh_home
    _flux(env, "stack", "up", timeout=300)
    materialized = _flux(env, "materialize")
    assert re.search(r"success — \d+ assets materialized, checks passed (\d+)/\1", materialized), materialized
    summary = _flux(env, "summary")
    assert "Pathway" in summary and "documents" in summary
    asked = _flux(env, "ask", SAMPLE_QUESTION)
    assert "hsa00010" in asked and "R-HSA-70171" in asked

    base = f"http://127.0.0.1:{env['FLUX_SERVE_PORT']}"
    server = subprocess.Popen([*FLUX, "serve"], env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(base, server)
        answer = _post(f"{base}/query", {"question": SAMPLE_QUESTION, "mode": "quick"})
    finally:
        server.terminate()
        server.wait(timeout=30)
    cited = {citation["id"] for citation in answer["citations"]}  # type: ignore[union-attr]
    assert {"hsa00010", "R-HSA-70171"} <= cited, cited
    assert not answer["refused"] and answer["answer"]
    assert Path(env["FLUX_HOME"], "dagster", "dagster.yaml").is_file()  # runs went to the fresh instance
