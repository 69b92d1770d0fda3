"""Reactome live pulls against a server that holds them to the ContentService contract (tests/support/contracts/
reactome.py), built from the recorded download files and the recorded ContentService object shape.

The rules, where they come from, and the tests that enforce them:
- reactome/content-service `QueryObjectController.findByIds` declares `POST /data/query/ids` with `consumes =
  "text/plain"`: any other Content-Type, or none, is Spring's 415 (`test_query_ids_is_415_without_text_plain_…`).
- The same method processes at most 20 ids per call: it keeps the first 20 and answers for those alone, with a 200
  (`test_query_ids_answers_only_the_first_twenty_ids_…`).
- Unknown ids and pathways without events are a NotFoundException, 404, in the ContentService's `ErrorInfo` JSON
  shape; `PathwaysController.getContainedEvents` likewise, which Flux reads as a pathway with no events
  (`test_unknown_ids_are_404s_…`).
- reactome/graph-core `DatabaseObject` is annotated with Jackson's `@JsonIdentityInfo(generator =
  PropertyGenerator, property = "dbId")`: an object that occurs twice in one response is written in full once and
  then as its bare integer dbId, at the top level and nested, in /data/query/ids answers
  (`test_query_ids_identity_references_…`) and in containedEvents answers (`test_contained_events_identity_…`).
- Reactome's ReactionLikeEvent classes (Reaction, BlackBoxEvent, Polymerisation, Depolymerisation, FailedReaction,
  CellDevelopmentStep) are all reactions; Pathway, TopLevelPathway and CellLineagePath are pathways; any other Event
  class (graph-core's InteractionEvent) is quarantined by name (`test_every_reaction_like_event_class_…`).
- A reference that names no object of its response is quarantined with its reason while the rest of the pull loads
  (`test_an_unresolvable_reference_…`); a 429 or 503 in the middle of a pull is retried and the pull completes with
  no record twice (`test_a_429_and_a_503_mid_pull_…`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dagster_project.core.http import HttpClient
from dagster_project.sources.ids import strip_html
from dagster_project.sources.model import Quarantined
from dagster_project.sources.reactome import parser
from dagster_project.sources.reactome.client import ReactomeClient
from tests.support.contracts.reactome import CONTENT, QUERY_IDS, SHARED, ReactomeContractServer, Reply

pytestmark = pytest.mark.shared_data
REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(os.environ.get("FLUX_SNAPSHOT_DIR", REPO.parent / "shared" / "data"))
DOWNLOADS = SNAPSHOT / "fixtures" / "reactome_downloads"
SUMMATIONS = REPO / "dagster_project" / "sources" / "demo_data" / "reactome" / "summations.json"
if not DOWNLOADS.is_dir():
    pytest.skip(f"recorded Reactome downloads not found under {DOWNLOADS}", allow_module_level=True)

CD28 = ["R-HSA-389357", "R-HSA-389356", "R-HSA-389359", "R-HSA-388841"]  # the human rows, in download order
TEXT = {"Content-Type": "text/plain"}
CLASSES = {"BlackBoxEvent": 1, "Depolymerisation": 1, "FailedReaction": 1, "Polymerisation": 1, "Reaction": 4}


@pytest.fixture
def server() -> Iterator[ReactomeContractServer]:
    served = ReactomeContractServer(DOWNLOADS, SUMMATIONS).start()
    yield served
    served.stop()


def _http(server: ReactomeContractServer, prefix: str, name: str) -> HttpClient:
    """A client paced and retried the way the live source's are, only faster (and configured with arguments every
    HttpClient version takes, so these tests also run against Flux's earlier releases)."""
    return HttpClient(
        server.url + prefix,
        requests_per_second=1000,
        max_attempts=3,
        backoff_initial=0.01,
        backoff_max=0.05,
        timeout=2.0,
        name=name,
    )


def _client(server: ReactomeContractServer) -> ReactomeClient:
    return ReactomeClient(
        _http(server, "/ContentService", "Reactome ContentService"),
        _http(server, "/download/current", "Reactome downloads"),
    )


def _answers(quarantined: list[Quarantined]) -> list[Quarantined]:
    """The quarantine rows of the ContentService answers (the recorded UniProt file has rows of its own: human
    proteins listed under rat pathway ids)."""
    return [q for q in quarantined if q.raw_ref.endswith(".json")]


def _post(server: ReactomeContractServer, body: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url + QUERY_IDS, content=body, headers=headers, timeout=2.0)


def test_query_ids_is_415_without_text_plain_and_flux_sends_text_plain(server: ReactomeContractServer) -> None:
    for headers, named in (({}, ""), ({"Content-Type": "application/json"}, "application/json")):
        refused = _post(server, ",".join(CD28), headers)
        assert (refused.status_code, refused.headers["Content-Type"]) == (415, "application/json")
        assert refused.json() == {
            "code": 415,
            "reason": "Unsupported Media Type",
            "messages": [f"Content type '{named}' not supported"],
        }
    answered = _client(server).summations(CD28)
    assert server.statuses(QUERY_IDS) == [415, 415, 200]
    assert server.hits(QUERY_IDS)[-1].headers["Content-Type"].startswith("text/plain")
    assert len(answered) == len(CD28)


def test_query_ids_answers_only_the_first_twenty_ids_so_flux_asks_in_twenties(server: ReactomeContractServer) -> None:
    known = sorted(server.pathways)
    assert len(known) == 32
    answer = _post(server, ", ".join(known[:25]), TEXT)
    assert answer.status_code == 200  # no error: ids 21 to 25 are dropped without a word
    summaries, bad = parser.parse_summations_json(answer.content, "raw/summations.json")
    assert sorted(summaries) == known[:20] and not bad

    answered = _client(server).summations(known)
    assert server.query_sizes[1:] == [20, 12]
    summaries, bad = parser.parse_summations_json(json.dumps(answered).encode(), "raw/summations.json")
    assert sorted(summaries) == known and all(summaries.values()) and not bad


def test_unknown_ids_are_404s_in_reactome_s_error_shape(server: ReactomeContractServer) -> None:
    missing = _post(server, "R-HSA-0000000", TEXT)
    assert (missing.status_code, missing.headers["Content-Type"]) == (404, "application/json")
    assert missing.json() == {
        "code": 404,
        "reason": "Not Found",
        "messages": ["Ids: [R-HSA-0000000] have not been found in the System"],
    }
    partly = _post(server, "R-HSA-389357, R-HSA-0000000", TEXT)
    assert [o["stId"] for o in partly.json()] == ["R-HSA-389357"]  # unknown ids beside known ones are left out

    events = httpx.get(server.url + CONTENT + "pathway/R-HSA-0000000/containedEvents", timeout=2.0)
    assert events.status_code == 404
    assert events.json()["messages"] == ["No contained events found in the given event: R-HSA-0000000"]
    # The same 404 answers a pathway that contains no events: Flux reads it as none, asked once, not retried.
    assert _client(server).contained_events(["R-HSA-0000000", CD28[1]])["R-HSA-0000000"] == []
    assert server.statuses(CONTENT + "pathway/R-HSA-0000000/containedEvents") == [404, 404]


def test_query_ids_identity_references_give_every_pathway_its_summation(server: ReactomeContractServer) -> None:
    answer = _post(server, ",".join(CD28), TEXT).json()
    # R-HSA-389359 was written in full inside R-HSA-389356's hasEvent, so its own place holds its bare dbId; its
    # summation is the object R-HSA-389357 wrote first, so inside it that is a bare dbId too.
    assert [o if isinstance(o, int) else o["stId"] for o in answer] == [CD28[0], CD28[1], 389359, CD28[3]]
    vav1 = next(e for e in answer[1]["hasEvent"] if isinstance(e, dict) and e["stId"] == "R-HSA-389359")
    assert vav1["summation"] == [answer[0]["summation"][0]["dbId"]]

    summaries, bad = parser.parse_summations_json(json.dumps(answer).encode(), "raw/summations.json")
    assert not bad
    assert sorted(summaries) == sorted(CD28) and all(summaries.values())
    assert summaries["R-HSA-389359"] == summaries["R-HSA-389357"] == strip_html(SHARED)


def test_contained_events_identity_references_resolve_within_each_answer(server: ReactomeContractServer) -> None:
    events = _client(server).contained_events(CD28)
    top = events["R-HSA-388841"]
    # The first event (the CD28 co-stimulation sub-pathway) holds every other one in its hasEvent tree.
    assert isinstance(top[0], dict) and len(top) == 11 and all(isinstance(e, int) for e in top[1:])

    result = parser.parse_reactions_json(json.dumps(events).encode(), "raw/reactions.json")
    assert not result.quarantined
    contained = {pid: sorted(e["stId"] for e in server.contained(pid) if e["schemaClass"] != "Pathway") for pid in CD28}
    listed = {
        pid: sorted(m.member_id for m in result.members if m.pathway_id == pid and m.member_kind == "reaction")
        for pid in CD28
    }
    assert listed == contained  # every pathway lists every reaction it contains, at any depth
    assert (
        len(contained["R-HSA-388841"]) == 8
        and "R-HSA-9990101" in listed["R-HSA-389357"]
        and "R-HSA-9990101" in listed["R-HSA-389359"]
    )  # the step both branches share, in each
    # One reaction row each, under the innermost pathway containing it (the one listing the fewest events).
    assert sorted(r.id for r in result.reactions) == contained["R-HSA-388841"]
    for reaction in result.reactions:
        holding = [pid for pid in CD28 if reaction.id in contained[pid]]
        assert reaction.pathway_id == min(holding, key=lambda pid: (len(server.contained(pid)), pid))
    assert len(result.reactions) == len(set(result.reactions)) and len(result.members) == len(set(result.members))


def test_every_reaction_like_event_class_is_kept_and_counted(server: ReactomeContractServer) -> None:
    server.add_event("R-HSA-389359", "R-HSA-9990108", "Naive T cell differentiates", "CellDevelopmentStep")
    server.add_event("R-HSA-389356", "R-HSA-9990109", "CD28 and CD80 interact", "InteractionEvent")
    events = _client(server).contained_events(CD28)
    result = parser.parse_reactions_json(json.dumps(events).encode(), "raw/reactions.json")

    assert result.reaction_classes == CLASSES | {"CellDevelopmentStep": 1}
    assert {r.id for r in result.reactions} == {e for e in server.events if e != "R-HSA-9990109"}
    # An Event class that is neither a reaction nor a pathway: quarantined by name in each answer that lists it.
    assert sorted((q.record_key.split(":event:")[0], q.reason) for q in result.quarantined) == [
        (pid, "unknown event schemaClass 'InteractionEvent'") for pid in ("R-HSA-388841", "R-HSA-389356")
    ]


def test_an_unresolvable_reference_is_quarantined_and_the_pull_loads_the_rest(server: ReactomeContractServer) -> None:
    answer = [*server.respond([server.pathways[pid] for pid in CD28]), 777]
    answer[0]["summation"].append(31337)
    server.inject(QUERY_IDS, Reply.json(json.dumps(answer)))
    leaf = [*server.respond(server.contained("R-HSA-389357")), 424242]
    server.inject(CONTENT + "pathway/R-HSA-389357/containedEvents", Reply.json(json.dumps(leaf)))

    records = parser.parse_raw(_client(server).pull(with_reactions=True).files, "raw/reactome")
    assert sorted((q.record_key, q.reason, q.payload) for q in _answers(records.quarantined)) == [
        (
            "R-HSA-389357",
            "summation dbId reference 31337 names no object written earlier in the same response",
            json.dumps(answer[0]),
        ),
        ("R-HSA-389357:event:4", "event is not an object", "424242"),
        ("dbId:777", "dbId reference 777 names no object written earlier in the same response", "777"),
    ]
    summaries = {p.id: p.summary for p in records.pathways}
    assert sorted(summaries) == sorted(CD28) and summaries["R-HSA-389357"] == strip_html(SHARED)
    assert len([m for m in records.members if m.pathway_id == "R-HSA-389357" and m.member_kind == "reaction"]) == 4


def test_a_429_and_a_503_mid_pull_are_retried_and_no_record_is_twice(server: ReactomeContractServer) -> None:
    events_path = CONTENT + "pathway/R-HSA-389356/containedEvents"
    server.inject(QUERY_IDS, Reply.error(429, retry_after="0"))
    server.inject(events_path, Reply.error(503))
    pulled = _client(server).pull(with_reactions=True)
    assert pulled.release == "Reactome v94"
    # The summations call meets the 429; the reaction-details call after it is answered at once.
    assert server.statuses(QUERY_IDS) == [429, 200, 200] and server.statuses(events_path) == [503, 200]

    records = parser.parse_raw(pulled.files, "raw/reactome")
    assert not _answers(records.quarantined)
    for rows in (records.pathways, records.members, records.reactions):
        assert rows and len(rows) == len(set(rows))
    assert sorted(p.id for p in records.pathways) == sorted(CD28) and all(p.summary for p in records.pathways)
    assert {m.pathway_id for m in records.members if m.member_kind == "reaction"} == set(CD28)
    assert len({r.id for r in records.reactions}) == len(records.reactions) and records.reaction_classes == CLASSES
