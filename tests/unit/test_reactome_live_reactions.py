"""Reactions with their participants and order in live mode: the client walks each contained reaction's details
through `POST /data/query/ids`, against the contract server (tests/support/contracts/reactome.py) built from the demo
folder, whose Glycolysis details are those of Reactome's BioPAX export.

The rules, where they come from, and the tests that hold them:
- reactome/content-service `QueryObjectController.findByIds` processes at most 20 ids (the first 20, answered with a
  200), consumes text/plain only (Spring's 415 otherwise) and answers a NotFoundException 404 in the `ErrorInfo`
  shape when it knows none of the ids (`test_query_ids_takes_twenty_text_plain_ids_…`); the client never sends more
  than 20 ids in one call, nor an id twice.
- Parsed, the live details give the export's participants (role, kind, id, flattened components) and steps, as
  `parse_biopax` reads them (`test_the_live_pull_gives_the_biopax_exports_…`); the demo files are what the live
  client writes and parse to the same tables (`test_the_demo_holds_what_the_live_client_writes_…`).
- A 429 or 503 during the walk is retried and no row is doubled; an answer of the wrong shape or a bare dbId that
  names nothing in its answer is quarantined with its reason and the rest parses.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dagster_project.core.http import HttpClient
from dagster_project.sources.model import ParseResult, ReactionParticipantRecord, ReactionStepRecord
from dagster_project.sources.reactome import parser
from dagster_project.sources.reactome.client import ReactomeClient, demo_pull
from tests.support.contracts.reactome import QUERY_IDS, ReactomeContractServer, RecordedRequest, Reply

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
OWL = SNAPSHOT / "reactome" / "reactions" / "R-HSA-70171_level3.biopax.owl"
DEMO = REPO / "dagster_project" / "sources" / "demo_data"
GLYCOLYSIS = "R-HSA-70171"
TEXT = {"Content-Type": "text/plain"}
Row = tuple[str, str, str, str, tuple[str, ...]]


class _Faulty(ReactomeContractServer):
    """The contract, except that the n-th /data/query/ids requests (counted from 1, retries included) get these
    replies."""

    def __init__(self, faults: dict[int, Reply]) -> None:
        super().__init__(DEMO / "reactome", DEMO / "reactome" / "summations.json")
        self.faults = faults
        self.calls = 0

    def serve(self, request: RecordedRequest) -> Reply:
        if request.path == QUERY_IDS:
            self.calls += 1
            if self.calls in self.faults:
                return self.faults[self.calls]
        return super().serve(request)


@pytest.fixture
def server() -> Iterator[ReactomeContractServer]:
    served = ReactomeContractServer(DEMO / "reactome", DEMO / "reactome" / "summations.json").start()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def clean() -> dict[str, bytes]:
    """The files of one fault-free live pull with reactions (pulled once: the tests only read them)."""
    served = ReactomeContractServer(DEMO / "reactome", DEMO / "reactome" / "summations.json").start()
    try:
        return _pull(served)
    finally:
        served.stop()


def _client(server: ReactomeContractServer) -> ReactomeClient:
    def http(prefix: str) -> HttpClient:
        return HttpClient(
            server.url + prefix,
            requests_per_second=1000,
            max_attempts=3,
            backoff_initial=0.01,
            backoff_max=0.05,
            timeout=2.0,
        )

    return ReactomeClient(http("/ContentService"), http("/download/current"))


def _pull(server: ReactomeContractServer) -> dict[str, bytes]:
    return _client(server).pull(with_reactions=True).files


def _faulty_pull(faults: dict[int, Reply]) -> tuple[dict[str, bytes], _Faulty]:
    faulty = _Faulty(faults).start()
    try:
        return _pull(faulty), faulty
    finally:
        faulty.stop()


def _parse(files: dict[str, bytes]) -> ParseResult:
    return parser.parse_raw(files, "raw/reactome")


def _rows(participants: Iterable[ReactionParticipantRecord]) -> set[Row]:
    return {(p.reaction_id, p.role, p.entity_kind, p.entity_id, p.components) for p in participants}


def _post(server: ReactomeContractServer, body: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url + QUERY_IDS, content=body, headers=headers, timeout=2.0)


@pytest.mark.shared_data
@pytest.mark.skipif(not OWL.is_file(), reason=f"Reactome's Glycolysis BioPAX export not found at {OWL}")
def test_the_live_pull_gives_the_biopax_exports_participants_and_steps(clean: dict[str, bytes]) -> None:
    from dagster_project.sources.reactome.biopax import parse_biopax  # loads pybiopax: only this test needs it

    records = _parse(clean)
    export = parse_biopax(OWL.read_bytes(), "raw/70171")
    own = {r.id for r in export.reactions if r.pathway_id == GLYCOLYSIS}
    assert len(own) == 15
    assert _rows(records.participants) == _rows(p for p in export.participants if p.reaction_id in own)
    assert set(records.steps) == {s for s in export.steps if s.preceding_id in own and s.following_id in own}
    assert {(r.id, r.name) for r in records.reactions if r.pathway_id == GLYCOLYSIS} == {
        (r.id, r.name) for r in export.reactions if r.id in own
    }
    assert not [q for q in records.quarantined if q.raw_ref.endswith(".json")]


def test_the_demo_holds_what_the_live_client_writes_and_parses_the_same(clean: dict[str, bytes]) -> None:
    live, demo = clean, demo_pull(DEMO).files
    assert json.loads(live["reaction_details.json"]) == json.loads(demo["reaction_details.json"])
    assert json.loads(live["reactions.json"])[GLYCOLYSIS] == json.loads(demo["reactions.json"])[GLYCOLYSIS]
    live_records, demo_records = _parse(live), _parse(demo)
    assert demo_records.participants == live_records.participants and demo_records.steps == live_records.steps
    assert set(demo_records.reactions) == {r for r in live_records.reactions if r.pathway_id == GLYCOLYSIS}
    assert (len(demo_records.reactions), len(demo_records.participants), len(demo_records.steps)) == (15, 80, 16)
    assert not demo_records.quarantined

    held = {(p.reaction_id, p.role, p.entity_id): p for p in demo_records.participants}
    glucose = held["R-HSA-70420", "input", "CHEBI:17925"]
    assert (glucose.entity_kind, glucose.name) == ("compound", "Glc")
    hexokinases = held["R-HSA-70420", "catalyst", "R-HSA-450097"]  # a set of proteins
    assert (hexokinases.entity_kind, hexokinases.components) == (
        "set",
        ("P35557", "P19367", "P52789", "P52790", "Q2TB90"),
    )
    pgk = held["R-HSA-71850", "catalyst", "R-HSA-6807624"]  # a set of complexes is a complex, as in BioPAX
    assert (pgk.entity_kind, pgk.components) == ("complex", ("P00558", "CHEBI:18420", "P07205"))
    pyruvate_kinase = held["R-HSA-71670", "catalyst", "R-HSA-450668"]  # isoforms under their base accession
    assert pyruvate_kinase.components == ("P14618", "CHEBI:18420", "CHEBI:29103", "P30613")
    pfk = {
        (p.role, p.entity_id)
        for p in demo_records.participants
        if p.reaction_id == "R-HSA-70467" and p.role.endswith("regulator")
    }
    assert pfk == {
        ("positive_regulator", "CHEBI:28602"),
        ("positive_regulator", "CHEBI:456216"),
        ("positive_regulator", "CHEBI:456215"),
        ("negative_regulator", "CHEBI:30769"),
        ("negative_regulator", "CHEBI:30616"),
    }
    assert ("R-HSA-70420", "R-HSA-70471") in {(s.preceding_id, s.following_id) for s in demo_records.steps}


def test_query_ids_takes_twenty_text_plain_ids_and_the_walk_never_sends_more(server: ReactomeContractServer) -> None:
    ids = [str(db_id) for db_id in sorted(server.objects)][:21]
    answer = _post(server, ",".join(ids), TEXT)
    assert answer.status_code == 200  # the 21st id is dropped without a word
    assert [o if isinstance(o, int) else o["dbId"] for o in answer.json()] == [int(i) for i in ids[:20]]
    for headers, named in (({}, ""), ({"Content-Type": "application/json"}, "application/json")):
        refused = _post(server, ids[0], headers)
        assert (refused.status_code, refused.json()) == (
            415,
            {"code": 415, "reason": "Unsupported Media Type", "messages": [f"Content type '{named}' not supported"]},
        )
    missing = _post(server, "R-HSA-0000000, 99999999", TEXT)
    assert (missing.status_code, missing.headers["Content-Type"]) == (404, "application/json")
    assert missing.json()["messages"] == ["Ids: [R-HSA-0000000, 99999999] have not been found in the System"]

    before = len(server.hits(QUERY_IDS))
    _pull(server)
    calls = server.hits(QUERY_IDS)[before:]
    assert all(c.headers["Content-Type"].startswith("text/plain") for c in calls)
    sizes = [len(c.body.decode().split(",")) for c in calls]
    assert max(sizes) == 20 and sizes[:2] == [20, 8]  # the 28 pathways' summations, then the details walk
    asked = [i for c in calls[2:] for i in c.body.decode().split(",")]
    assert len(asked) == len(set(asked)) == len(server.objects) - _never_asked(server) == 148


def _never_asked(server: ReactomeContractServer) -> int:
    """Objects the walk has no reason to ask for: references, summations and the species."""
    return sum(
        1
        for o in server.objects.values()
        if o["schemaClass"] in {"ReferenceGeneProduct", "ReferenceIsoform", "ReferenceMolecule", "Summation", "Species"}
    )


def test_a_429_and_a_503_in_the_walk_are_retried_and_no_row_is_twice(clean: dict[str, bytes]) -> None:
    # Calls 1 and 2 are the summations; 3 to 5 the first details call (429, 503, then answered), 6 the next.
    pulled, faulty = _faulty_pull({3: Reply.error(429, retry_after="0"), 4: Reply.error(503), 7: Reply.error(503)})
    assert faulty.statuses(QUERY_IDS)[:8] == [200, 200, 429, 503, 200, 200, 503, 200]
    assert json.loads(pulled["reaction_details.json"]) == json.loads(clean["reaction_details.json"])
    records = _parse(pulled)
    for rows in (records.reactions, records.participants, records.steps):
        assert rows and len(rows) == len(set(rows))
    assert records.participants == _parse(clean).participants and not records.quarantined


def test_an_answer_of_the_wrong_shape_is_quarantined_and_the_rest_parses(clean: dict[str, bytes]) -> None:
    expected = _parse(clean)
    # The second details call (round two: participants, catalyst activities, regulations) answers an object.
    pulled, _ = _faulty_pull({4: Reply.json(json.dumps({"code": 200, "note": "not the array findByIds returns"}))})
    records = _parse(pulled)
    wrong = [q for q in records.quarantined if q.record_key == "answer:1"]
    assert [q.reason for q in wrong] == ["answer 1 is a JSON object, not the array /data/query/ids returns"]
    kept = set(records.participants)
    assert kept and kept < set(expected.participants) and records.steps == expected.steps
    # Whatever that answer held is missing from its reactions, each with a row that says so.
    lost = {p.reaction_id for p in set(expected.participants) - kept}
    rows = [q for q in records.quarantined if q.record_key != "answer:1"]
    assert lost and lost <= {q.record_key.split("|")[0] for q in rows}
    assert all("returned by no /data/query/ids answer" in q.reason for q in rows)


def test_a_reference_that_names_nothing_in_its_answer_is_quarantined(clean: dict[str, bytes]) -> None:
    expected = _parse(clean)
    first: list[Any] = json.loads(clean["reaction_details.json"])[0]  # the reactions, as the walk asks them
    isomerase = next(o for o in first if isinstance(o, dict) and o["stId"] == "R-HSA-70471")
    isomerase["input"] = [999999999]
    isomerase["precedingEvent"] = [888888888 if e == 70420 else e for e in isomerase["precedingEvent"]]
    pulled, _ = _faulty_pull({3: Reply.json(json.dumps(first))})
    records = _parse(pulled)
    assert sorted((q.record_key, q.reason) for q in records.quarantined) == [
        (
            "R-HSA-70471|dbId:999999999",
            "input of R-HSA-70471: physical entity dbId reference 999999999 names no "
            "object written earlier in the same response",
        ),
        (
            "R-HSA-70471|precedingEvent",
            "precedingEvent dbId reference 888888888 names no object written earlier in the same response",
        ),
    ]
    assert _rows(expected.participants) - _rows(records.participants) == {
        ("R-HSA-70471", "input", "compound", "CHEBI:58225", ())
    }
    assert set(expected.steps) - set(records.steps) == {ReactionStepRecord("R-HSA-70420", "R-HSA-70471")}
    assert set(records.participants) < set(expected.participants) and set(records.steps) < set(expected.steps)
