"""End to end, as a newcomer runs it: `make run`'s commands (`flux stack up`, `flux materialize`, `flux summary`,
`flux ask`) in a fresh FLUX_HOME on ports of its own, from nothing, and what the stack's daemon does after them.
Everything runs as separate processes from the command line; nothing is imported from the test session. What a user
does next on the platform this builds (`flux ask --explain`, `flux serve` over HTTP) is checked on the integration
tests' demo platform (tests/integration/test_served_path.py): it needs no second fresh build."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from dagster_project.core.settings import REPO_ROOT
from tests.support.makefile import SAMPLE_QUESTION
from tests.support.ports import free_port

FLUX = [sys.executable, "-m", "dagster_project.cli"]
DEMO = REPO_ROOT / "dagster_project" / "sources" / "demo_data"
# One process reads the instance: the run `make run` queued (its code location, trigger and status), then the release
# partitions the daemon's automation records after it, polled until all four are there or the wait is over.
PROBE = """
import sys, time
import dagster as dg
instance = dg.DagsterInstance.get()
run = instance.get_run_by_id(sys.argv[1])
print(run.remote_job_origin.location_name, run.tags["flux/trigger"], run.status.value)
deadline = time.monotonic() + float(sys.argv[2])
while True:
    counts = [
        len(instance.get_materialized_partitions(dg.AssetKey(f"{source}_release_history")))
        for source in ("hgnc", "reactome", "kegg", "clinvar")
    ]
    if counts == [1, 1, 1, 1] or time.monotonic() > deadline:
        break
    time.sleep(2)
print(*counts)
"""
RELEASE_HISTORY_WAIT_S = 240
ROW = re.compile(r"^│\s*([^│]+?)\s*│\s*([^│]+?)\s*│\s*(\d+)\s*│$")
SOURCE_ROW = re.compile(r"^│\s*(\w+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\w+|-)\s*│$")


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


def _summary_tables(summary: str) -> tuple[dict[tuple[str, str], int], dict[str, list[int]], dict[str, str]]:
    """`flux summary`'s tables: (store, table / label) → count, source → its per-source counts (documents
    active, documents gone, genes, associations, quarantined), and source → the mode of its latest raw pull."""
    counts = {(m[1], m[2]): int(m[3]) for line in summary.splitlines() if (m := ROW.match(line.strip()))}
    rows = [m for line in summary.splitlines() if (m := SOURCE_ROW.match(line.strip()))]
    sources = {m[1]: [int(m[i]) for i in range(2, 7)] for m in rows}
    pulls = {m[1]: m[7] for m in rows}
    return counts, sources, pulls


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
    the code location's, tagged with what started it; the daemon's automation then records each source's release."""
    assert re.search(r"Nightly refresh \(Dagster daemon running\)", summary), summary
    assert re.search(r"│ nightly_refresh\s+│ \d{4}-\d\d-\d\d 02:00 UTC", summary), summary
    # Skipped: the first look records the files `make run` pulled; a later look (the interval passed while `make run`
    # ran on a busy machine) finds them unchanged. Either way no refresh is requested for what was just pulled.
    assert re.search(
        r"│ snapshot_changed\s+│ every interval\s+│ [\d-]+ [\d:]+\s+│ skipped\s+│ "
        r"(first evaluation|source files unchanged)",
        summary,
    ), summary
    raw_root = env.get("FLUX_RAW_ROOT") or str(Path(env["FLUX_HOME"], "raw"))
    assert f"Runs of this instance read demo pulls under {raw_root}" in " ".join(summary.split()), summary
    home = {"DAGSTER_HOME": str(Path(env["FLUX_HOME"], "dagster"))}
    seen = subprocess.run(
        [sys.executable, "-c", PROBE, run_id, str(RELEASE_HISTORY_WAIT_S)],
        env=env | home,
        capture_output=True,
        text=True,
        timeout=RELEASE_HISTORY_WAIT_S + 120,
        check=True,
    ).stdout.splitlines()
    assert seen[0].split() == ["flux", "make-run", "SUCCESS"], seen
    # After `make run`, the daemon's automation records each source's release as a partition of its history.
    assert seen[1].split() == ["1", "1", "1", "1"], f"release partitions recorded (hgnc reactome kegg clinvar): {seen}"


@pytest.mark.timeout(1800)  # make run's whole path on 2 cores, beside the other sessions: 8-11 min measured
def test_make_run_from_nothing_then_the_sample_question(fresh_home: dict[str, str]) -> None:
    env = fresh_home
    started = _flux(env, "stack", "up", timeout=300)
    assert re.search(r"^dagster-daemon\s+running\b.*started", started, re.M), started
    # The location's one code server, which the daemon reads and which launches the run below.
    assert re.search(r"^code-server\s+running\s+unix://\S+code-server\.sock\b.*started", started, re.M), started
    materialized = _flux(env, "materialize", "--trigger", "make-run")
    # The daemon that `stack up` started dequeues the run: it goes through the code location, as the UI's would.
    run_id = re.search(
        r"^run (\S+) \(queued\): success — \d+ assets materialized, checks passed (\d+)/\2", materialized, re.M
    )
    assert run_id, materialized
    summary = _flux(env, "summary")
    counts, sources, pulls = _summary_tables(summary)
    assert set(pulls.values()) == {"demo"}, pulls  # what each source's latest raw pull read
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
    # Last, while the daemon's automation has been recording the releases beside the commands above.
    _assert_the_daemon_looked(summary, env, run_id.group(1))
    assert Path(env["FLUX_HOME"], "dagster", "dagster.yaml").is_file()  # runs went to the fresh instance
