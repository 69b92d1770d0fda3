"""End to end, as a newcomer runs it: `make run`'s commands (`flux stack up`, `flux materialize`, `flux summary`,
`flux ask`) in a fresh FLUX_HOME on ports of its own, then `flux serve` and the sample question over HTTP.
Everything runs as separate processes from the command line; nothing is imported from the test session."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from dagster_project.core.settings import REPO_ROOT
from tests.support.ports import free_port

SAMPLE_QUESTION = re.search(r"^SAMPLE_QUESTION \?= (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M).group(1)
FLUX = [sys.executable, "-m", "dagster_project.cli"]
DEMO = REPO_ROOT / "dagster_project" / "sources" / "demo_data"
ROW = re.compile(r"^│\s*([^│]+?)\s*│\s*([^│]+?)\s*│\s*(\d+)\s*│$")
SOURCE_ROW = re.compile(r"^│\s*(\w+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│$")


@pytest.fixture(scope="module")
def fresh_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a new machine: only FLUX_HOME and ports chosen here, no FLUX_ variable of the session."""
    home = tmp_path_factory.mktemp("e2e-home")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLUX_", "DAGSTER_", "RAY_ADDRESS"))}
    env |= {
        "FLUX_HOME": str(home),
        "FLUX_PG_PORT": str(free_port()),
        "FLUX_NEO4J_BOLT_PORT": str(free_port()),
        "FLUX_REDIS_PORT": str(free_port()),
        "FLUX_SERVE_PORT": str(free_port()),
        "FLUX_RAY_NUM_CPUS": "2",
    }
    try:
        yield env
    finally:
        subprocess.run([*FLUX, "stack", "down"], env=env, cwd=REPO_ROOT, capture_output=True, timeout=180)


def _flux(env: dict[str, str], *args: str, timeout: int = 900) -> str:
    result = subprocess.run([*FLUX, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"flux {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def _post(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 200
        return json.loads(response.read())


def _demo_counts() -> dict[str, int]:
    """What the bundled demo files hold, counted from the files themselves."""
    reactome = (DEMO / "reactome" / "ReactomePathways.txt").read_text().splitlines()
    return {
        "openalex works": len(json.loads((DEMO / "openalex" / "works_page1.json").read_text())["results"]),
        "hgnc genes": len((DEMO / "hgnc" / "hgnc_complete_set.txt").read_text().splitlines()) - 1,  # a header
        "kegg pathways": len((DEMO / "kegg" / "list_pathway_hsa.txt").read_text().splitlines()),
        "reactome pathways": sum("\tHomo sapiens" in line for line in reactome),
        # Each demo reaction has a summation, so a document of its own.
        "reactome reactions": sum(
            len(events) for events in json.loads((DEMO / "reactome" / "reactions.json").read_text()).values()
        ),
    }


def _summary_tables(summary: str) -> tuple[dict[tuple[str, str], int], dict[str, list[int]]]:
    """`flux summary`'s tables: (store, table / label) → count, and source → its per-source counts (documents
    active, documents gone, genes, associations, quarantined)."""
    counts = {(m[1], m[2]): int(m[3]) for line in summary.splitlines() if (m := ROW.match(line.strip()))}
    sources = {
        m[1]: [int(m[i]) for i in range(2, 7)] for line in summary.splitlines() if (m := SOURCE_ROW.match(line.strip()))
    }
    return counts, sources


def _shared_in_graph(env: dict[str, str], left: str, right: str) -> set[str]:
    """The genes both pathways hold, read over Bolt from the Neo4j that `flux env` names (not through Flux's code)."""
    exported = dict(re.findall(r"^export (FLUX_NEO4J_\w+)=(\S+)$", _flux(env, "env"), re.M))
    auth = (shlex.split(exported["FLUX_NEO4J_USER"])[0], shlex.split(exported["FLUX_NEO4J_PASSWORD"])[0])
    with GraphDatabase.driver(shlex.split(exported["FLUX_NEO4J_URI"])[0], auth=auth) as driver:
        records = driver.execute_query(
            "MATCH (:Pathway {id: $left})-[:HAS_MEMBER]->(g:Gene)<-[:HAS_MEMBER]-(:Pathway {id: $right})"
            " RETURN g.symbol AS symbol",
            left=left,
            right=right,
        ).records
    return {record["symbol"] for record in records}


def _assert_the_daemon_looked(summary: str, env: dict[str, str], run_id: str) -> None:
    """The summary says what tonight holds and what the sensors made of the files `make run` pulled; the run is
    the code location's, tagged with what started it."""
    assert re.search(r"Nightly refresh \(Dagster daemon running\)", summary), summary
    assert re.search(r"│ nightly_refresh\s+│ \d{4}-\d\d-\d\d 02:00 UTC", summary), summary
    assert re.search(
        r"│ snapshot_changed\s+│ every interval\s+│ [\d-]+ [\d:]+\s+│ skipped\s+│ first evaluation", summary
    ), summary
    raw_root = env.get("FLUX_RAW_ROOT") or str(Path(env["FLUX_HOME"], "raw"))
    assert f"Runs of this instance read demo pulls under {raw_root}" in " ".join(summary.split()), summary
    probe = (
        "import dagster as dg, sys; i = dg.DagsterInstance.get(); r = i.get_run_by_id(sys.argv[1]); "
        "print(r.remote_job_origin.location_name, r.tags['flux/trigger'], r.status.value)"
    )
    home = {"DAGSTER_HOME": str(Path(env["FLUX_HOME"], "dagster"))}
    seen = subprocess.run(
        [sys.executable, "-c", probe, run_id], env=env | home, capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    assert seen == ["flux", "make-run", "SUCCESS"], seen
    _assert_the_release_history_is_recorded(env | home)


def _assert_the_release_history_is_recorded(env: dict[str, str], deadline_s: float = 240) -> None:
    """After `make run`, the daemon's automation records each source's release as a partition of its history."""
    probe = (
        "import dagster as dg; i = dg.DagsterInstance.get(); print(' '.join(str(len("
        "i.get_materialized_partitions(dg.AssetKey(f'{s}_release_history')))) for s in "
        "('hgnc', 'reactome', 'kegg', 'clinvar')))"
    )
    deadline = time.monotonic() + deadline_s
    while True:
        counts = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120, check=True
        ).stdout.split()
        if counts == ["1", "1", "1", "1"] or time.monotonic() > deadline:
            break
        time.sleep(5)
    assert counts == ["1", "1", "1", "1"], f"release partitions recorded (hgnc reactome kegg clinvar): {counts}"


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


@pytest.mark.timeout(1800)  # make run's whole path on 2 cores, beside the other sessions: 8-11 min measured
def test_make_run_then_the_sample_question_over_http(fresh_home: dict[str, str]) -> None:
    env = fresh_home
    started = _flux(env, "stack", "up", timeout=300)
    assert re.search(r"^dagster-daemon\s+running\b.*started", started, re.M), started
    materialized = _flux(env, "materialize", "--trigger", "make-run")
    # The daemon that `stack up` started dequeues the run: it goes through the code location, as the UI's would.
    run_id = re.search(
        r"^run (\S+) \(queued\): success — \d+ assets materialized, checks passed (\d+)/\2", materialized, re.M
    )
    assert run_id, materialized
    summary = _flux(env, "summary")
    counts, sources = _summary_tables(summary)
    _assert_the_daemon_looked(summary, env, run_id.group(1))
    demo = _demo_counts()
    # Per source: documents (active), documents (gone), genes, associations, quarantined; every demo record is one or
    # the other.
    assert sources["openalex"][0] + sources["openalex"][4] == demo["openalex works"], sources
    assert sources["hgnc"][2] == demo["hgnc genes"], sources
    assert sources["kegg"][0] == demo["kegg pathways"], sources
    assert sources["reactome"][0] == demo["reactome pathways"] + demo["reactome reactions"], sources
    assert sources["clinvar"][3] > 0 and sources["clinvar"][4] > 0, sources  # placed rows, and the bad ones
    pathways = demo["kegg pathways"] + demo["reactome pathways"]
    assert counts[("postgres", "pathways")] == counts[("neo4j", "Pathway")] == pathways, counts
    assert counts[("postgres", "chunks")] == counts[("postgres", "chunks (with a vector)")] > 0, counts
    assert counts[("postgres", "quarantine")] == sum(row[4] for row in sources.values())
    assert counts[("postgres", "disease_associations")] == sources["clinvar"][3], counts
    asked = json.loads(_flux(env, "ask", "--json", SAMPLE_QUESTION))
    data = asked["data"]
    assert (data["kind"], data["pathway"]["id"], data["target_source"]) == ("counterpart", "R-HSA-70171", "kegg")
    best = data["counterparts"][0]
    assert (best["pathway"]["id"], best["relation"]) == ("hsa00010", "equivalent"), best
    expected_genes = _shared_in_graph(env, "R-HSA-70171", "hsa00010")
    assert expected_genes and sorted(best["shared_genes"]) == sorted(expected_genes)
    assert {c["id"] for c in asked["citations"]} >= {"hsa00010", "R-HSA-70171"} and not asked["refused"]
    assert (asked["plan"]["kind"], asked["plan"]["proposed_by"]) == ("counterpart", "rules")
    explained = _flux(env, "ask", "--explain", "Is Glycolysis part of Metabolism?")
    assert "A: Yes: Reactome R-HSA-70171" in explained, explained
    assert "Plan: check part_of R-HSA-70171 'Glycolysis' → R-HSA-1430728 'Metabolism'" in explained, explained

    base = f"http://127.0.0.1:{env['FLUX_SERVE_PORT']}"
    server = subprocess.Popen(
        [*FLUX, "serve"], env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
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
