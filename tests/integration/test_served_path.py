"""What a user does after `make run`, on the session's demo platform: `flux ask --explain` shows the plan an answer
follows, and `flux serve`, started as its own process from the command line, answers the sample question over HTTP
with its citations. (tests/e2e/ runs `make run` itself from nothing: its stack, run, summary and first answer.)"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from typing import Any

import pytest

from dagster_project.core.settings import REPO_ROOT, FluxSettings
from tests.support.cli import flux
from tests.support.location import location_env
from tests.support.makefile import SAMPLE_QUESTION
from tests.support.ports import free_port

SERVE_START_S = 180  # the encoder's load and the first index read, on a loaded 2-core machine


def test_ask_explain_shows_the_plan_and_the_answer(demo_platform: FluxSettings) -> None:
    env = location_env(demo_platform)
    explained = flux("ask", "--explain", "Is Glycolysis part of Metabolism?", env=env)
    assert explained.code == 0, explained.stderr
    assert "A: Yes: Reactome R-HSA-70171" in explained.stdout, explained.stdout
    assert "Plan: check part_of R-HSA-70171 'Glycolysis' → R-HSA-1430728 'Metabolism'" in explained.stdout


def _post(url: str, body: dict[str, object]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 200
        return json.loads(response.read())


def _wait_healthy(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + SERVE_START_S
    while time.monotonic() < deadline:
        assert server.poll() is None, "flux serve exited"
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"flux serve did not answer /health within {SERVE_START_S} s")


def test_flux_serve_answers_the_sample_question_over_http_with_its_citations(demo_platform: FluxSettings) -> None:
    port = free_port()
    env = location_env(demo_platform, FLUX_SERVE_PORT=str(port))
    server = subprocess.Popen(
        [sys.executable, "-m", "dagster_project.cli", "serve"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, server)
        answer = _post(f"{base}/query", {"question": SAMPLE_QUESTION, "mode": "quick"})
    finally:
        server.terminate()
        server.wait(timeout=30)
    cited = {citation["id"] for citation in answer["citations"]}
    assert {"hsa00010", "R-HSA-70171"} <= cited, cited
    assert not answer["refused"] and answer["answer"]
    assert (answer["kind"], answer["data"]["pathway"]["id"]) == ("counterpart", "R-HSA-70171")
